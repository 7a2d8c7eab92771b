/** Counts of what reached the sandbox since it started, for tests and rehearsals (GET /_sandbox/stats). */
export class RequestStats {
  readonly byRoute: Record<string, number> = {};
  readonly byStatus: Record<string, number> = {};
  readonly faults: Record<string, number> = {};
  total = 0;
  /** Request body bytes received, to compare what two runs sent. */
  bodyBytes = 0;

  recordResponse(route: string, status: number, bodyBytes = 0): void {
    this.total++;
    this.bodyBytes += bodyBytes;
    this.byRoute[route] = (this.byRoute[route] ?? 0) + 1;
    this.byStatus[status] = (this.byStatus[status] ?? 0) + 1;
  }

  recordFaults(names: string[]): void {
    for (const name of names) this.faults[name] = (this.faults[name] ?? 0) + 1;
  }
}
