#!/bin/sh
# leadctl-nightly.sh — push the LMS's nightly export to the service, from cron.
#
# cron runs jobs with PATH=/usr/bin:/bin and almost no environment, so everything this script
# needs is an absolute path set below or in its settings file. Try it as cron will run it:
#   env -i PATH=/usr/bin:/bin HOME="$HOME" /usr/local/bin/leadctl-nightly.sh
#
# Usage: leadctl-nightly.sh [DAY]     DAY (YYYY-MM-DD) names the export; default: today.
# Exit code: leadctl's own (0 ok, 2 input, 3 credentials, 4 rejects, 5 service down after the
# retries below, 7 another run holds the lock, 130/143 interrupted, 1 unexpected), or 2 when this
# script's settings are wrong.
#
# docs/cron.md explains each step; test/docs/cron.test.ts runs this file under `env -i`.

set -u

# Settings: the defaults below, overridden by the settings file (shell assignments, chmod 600 if
# it holds credentials), whose path cron may pass as LEADCTL_NIGHTLY_CONF.
LEADCTL_NIGHTLY_CONF=${LEADCTL_NIGHTLY_CONF:-/etc/leadctl/nightly.conf}
LEADCTL=/usr/local/bin/leadctl                # `command -v leadctl`
NODE_DIR=/usr/local/bin                       # folder of node 22.13+ or 24: `dirname "$(command -v node)"`
PROFILE=nightly                               # the profile to push with (`leadctl auth login --profile nightly`)
EXPORT_DIR=/data/lms
EXPORT_NAME=export-%DAY%.csv.gz               # %DAY% is replaced by the day
MAPPING=/etc/leadctl/lms-mapping.json
LOG_DIR=/var/log/leadctl                      # logs, summaries and rejects files, one of each per day
KEEP_DAYS=30                                  # older logs, summaries and rejects files are deleted
MAX_TRIES=4                                   # tries in all when the service stays unavailable (exit 5)
RETRY_WAIT=900                                # seconds between those tries
FULL_WEEKDAY=7                                # day of the week (1 Monday .. 7 Sunday) that sends everything
                                              # (--full); the other nights send only what changed
                                              # (--changed-only); empty: --changed-only every night
ALERT=                                        # a command given the subject as $1 and the details on stdin
                                              # (e.g. a wrapper around mail); empty: to cron's mail (stderr)
if [ -f "$LEADCTL_NIGHTLY_CONF" ]; then
  . "$LEADCTL_NIGHTLY_CONF"
fi

PATH="$NODE_DIR:/usr/local/bin:/usr/bin:/bin"
export PATH
umask 077                                     # summaries and rejects files hold personal data

DAY=${1:-$(date +%F)}                         # a retry after midnight still pushes the same day
case $DAY in
  [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]) ;;
  *) echo "leadctl nightly: the day must be YYYY-MM-DD, got \"$DAY\"" >&2; exit 2 ;;
esac
EXPORT="$EXPORT_DIR/$(printf '%s' "$EXPORT_NAME" | sed "s/%DAY%/$DAY/g")"
LOG="$LOG_DIR/nightly-$DAY.log"
SUMMARY="$LOG_DIR/summary-$DAY.json"
REJECTS="$LOG_DIR/rejects-$DAY.csv"

# Alerts go to $ALERT, else to the stderr cron started us with (mailed to MAILTO).
exec 3>&2
log() { printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"; }
alert() {
  log "ALERT: $1"
  if [ -n "$ALERT" ]; then
    printf '%s\n\nlog: %s\n' "$2" "$LOG" | "$ALERT" "leadctl nightly $DAY: $1" || log "the alert command $ALERT failed"
  else
    printf 'leadctl nightly %s: %s\n%s\nlog: %s\n' "$DAY" "$1" "$2" "$LOG" >&3
  fi
}

if ! mkdir -p "$LOG_DIR" 2>/dev/null || ! [ -w "$LOG_DIR" ]; then
  echo "leadctl nightly: cannot write to LOG_DIR=$LOG_DIR" >&2
  exit 2
fi
exec >>"$LOG" 2>&1

# One run at a time: a run still going (a slow night, retries) makes the next one stop here.
exec 9>"$LOG_DIR/nightly.lock"
if ! flock -n 9; then
  log "another nightly run holds $LOG_DIR/nightly.lock: not starting (exit 7)"
  exit 7
fi

if [ ! -x "$LEADCTL" ]; then
  alert "leadctl not found" "LEADCTL=$LEADCTL is not an executable file: set it to the output of \`command -v leadctl\`"
  exit 2
fi
if ! command -v node >/dev/null 2>&1; then
  alert "node not found" "no node in NODE_DIR=$NODE_DIR: set it to the folder of node 22.13+ or 24"
  exit 2
fi

find "$LOG_DIR" -type f \( -name 'nightly-*.log' -o -name 'summary-*.json' -o -name 'rejects-*.csv' -o -name 'rejects-*.csv.*.partial' \) -mtime +"$KEEP_DAYS" -exec rm -f {} + 2>/dev/null

# Nightly, only the customers that changed since the service last acknowledged them; once a week
# everything, which also refreshes leadctl's record of what was sent.
DELTA=--changed-only
if [ "$(date -d "$DAY" +%u 2>/dev/null || date +%u)" = "$FULL_WEEKDAY" ]; then
  DELTA=--full
fi

try=1
while :; do
  log "try $try of $MAX_TRIES: $LEADCTL --profile $PROFILE customers batch $EXPORT $DELTA --resume"
  # --resume: after a failed try, send only what the service has not acknowledged (harmless on a fresh export).
  "$LEADCTL" --profile "$PROFILE" --output json customers batch "$EXPORT" \
    --mapping "$MAPPING" --rejects "$REJECTS" "$DELTA" --resume >"$SUMMARY"
  code=$?
  log "leadctl exited $code"
  if [ "$code" -eq 5 ] && [ "$try" -lt "$MAX_TRIES" ]; then
    log "service unavailable: trying again in $RETRY_WAIT s"
    sleep "$RETRY_WAIT"
    try=$((try + 1))
    continue
  fi
  break
done

case $code in
  0) log "done: every record accepted" ;;
  4) alert "records rejected" "the push completed; the rejected records and why are in $REJECTS (summary: $SUMMARY)" ;;
  5) alert "service unavailable" "still unavailable after $try tries; what was not acknowledged is in the journal: rerun this script for $DAY to send the rest" ;;
  7) log "another push of profile $PROFILE holds leadctl's lock: nothing done" ;;
  2) alert "invalid input or settings" "leadctl refused the export, the mapping or a setting (the log names it, and says if requests went before it was found); fix it and rerun" ;;
  3) alert "credentials refused" "run \`leadctl auth login --profile $PROFILE\` with the current secret, then rerun for $DAY" ;;
  130 | 143) alert "interrupted" "rerun this script for $DAY: --resume sends the rest" ;;
  *) alert "failed (exit $code)" "an unexpected error: see the log; rerun for $DAY once fixed" ;;
esac
exit "$code"
