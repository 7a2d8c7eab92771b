import { LeadctlError, ExitCode } from '../errors.js';

/**
 * Bounds on following a service's pages. A service that repeats a cursor, sends ids it already
 * sent, or reports a page count beyond reason would otherwise make a run loop forever or print
 * duplicates: each of these ends the run with a PagingError (exit 5, a fault of the service's
 * answers) before anything of the offending page is passed on.
 */

/** More pages of lists than any account has (at the sandbox's 250 a page, a quarter of a million lists). */
export const MAX_LIST_PAGES = 1_000;
/** Lead ids: at the largest page size, ten million ids in one run. */
export const MAX_LEAD_ID_PAGES = 100_000;

/** What made the pages untrustworthy; also the error's `details` in its JSON form. */
export type PagingFault =
  | { reported_pages: number; limit: number }
  | { pages: number; limit: number }
  | { page: number; repeated: string | number }
  | { page: number; cursor: string };

export class PagingError extends LeadctlError {
  readonly fault: PagingFault;
  constructor(message: string, fault: PagingFault) {
    super('paging', ExitCode.SERVICE, message, {
      hint: "the service's paging is inconsistent; nothing after the last good page was printed. Rerun later, and report it to the service if it persists",
      details: fault,
    });
    this.fault = fault;
  }
}

export class PageGuard<Id extends string | number> {
  private readonly cursors = new Set<string>();
  private readonly ids = new Set<Id>();
  pages = 0;

  /** `what` names the paged thing in messages ("lead ids", "lists"). */
  constructor(
    private readonly what: string,
    private readonly maxPages: number,
    startCursor?: string,
  ) {
    if (startCursor) this.cursors.add(startCursor);
  }

  /** Checks one page before any of it is used; throws a PagingError when it cannot be trusted. */
  check(page: { ids: readonly Id[]; nextCursor?: string | null; reportedPages?: number }): void {
    this.pages++;
    if (page.reportedPages !== undefined && page.reportedPages > this.maxPages) {
      throw new PagingError(
        `the service reports ${page.reportedPages.toLocaleString('en-US')} pages of ${this.what}, more than the ${this.maxPages.toLocaleString('en-US')} leadctl will follow`,
        { reported_pages: page.reportedPages, limit: this.maxPages },
      );
    }
    if (this.pages > this.maxPages) {
      throw new PagingError(
        `the service kept sending pages of ${this.what} past ${this.maxPages.toLocaleString('en-US')} pages`,
        { pages: this.pages, limit: this.maxPages },
      );
    }
    const seenInPage = new Set<Id>();
    for (const id of page.ids) {
      if (this.ids.has(id) || seenInPage.has(id)) {
        throw new PagingError(
          `page ${this.pages} of ${this.what} repeats ${String(id)}, already sent${this.ids.has(id) ? ' on an earlier page' : ' on the same page'}`,
          { page: this.pages, repeated: id },
        );
      }
      seenInPage.add(id);
    }
    for (const id of seenInPage) this.ids.add(id);
    const next = page.nextCursor;
    if (next) {
      if (this.cursors.has(next))
        throw new PagingError(
          `page ${this.pages} of ${this.what} points back to a cursor already followed (${next}): the paging would loop`,
          { page: this.pages, cursor: next },
        );
      this.cursors.add(next);
    }
  }
}
