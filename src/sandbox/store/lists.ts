import type { Statement } from 'better-sqlite3';
import type { ListType } from '../../schema/index.js';
import { matchKey } from '../domain/match-key.js';
import type { Db } from './database.js';

export interface ListRecord {
  id: number;
  name: string;
  type: string;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = 'id, name, type, deleted_at, created_at, updated_at';

/** Named lists and their items. Items are stored in their match form and never read back out. */
export class ListStore {
  private readonly insertList: Statement;
  private readonly updateList: Statement;
  private readonly deleteItems: Statement;
  private readonly insertItem: Statement;
  private readonly byId: Statement;
  private readonly pageStmt: Statement;
  private readonly countStmt: Statement;
  private readonly listedStmt: Statement;

  constructor(
    private readonly db: Db,
    private readonly accountId: number,
  ) {
    this.insertList = db
      .prepare('INSERT INTO lists (account_id, name, type, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id')
      .pluck();
    this.updateList = db.prepare('UPDATE lists SET name = ?, type = ?, updated_at = ? WHERE id = ? AND account_id = ?');
    this.deleteItems = db.prepare('DELETE FROM list_items WHERE list_id = ?');
    this.insertItem = db.prepare('INSERT INTO list_items (list_id, type, value) VALUES (?, ?, ?)');
    this.byId = db.prepare(`SELECT ${COLUMNS} FROM lists WHERE id = ? AND account_id = ?`);
    this.pageStmt = db.prepare(`SELECT ${COLUMNS} FROM lists WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?`);
    this.countStmt = db.prepare('SELECT count(*) FROM lists WHERE account_id = ?').pluck();
    this.listedStmt = db
      .prepare(
        `SELECT 1 FROM list_items i JOIN lists l ON l.id = i.list_id
         WHERE i.type = ? AND i.value = ? AND l.account_id = ? AND l.deleted_at IS NULL LIMIT 1`,
      )
      .pluck();
  }

  create(name: string, type: ListType, items: readonly string[], now: string): ListRecord {
    return this.db.transaction(() => {
      const id = this.insertList.get(this.accountId, name, type, now, now) as number;
      this.insertItems(id, type, items);
      return this.get(id)!;
    })();
  }

  /** Replaces name, type and every item; undefined when the list does not exist. */
  replace(id: number, name: string, type: ListType, items: readonly string[], now: string): ListRecord | undefined {
    return this.db.transaction(() => {
      if (this.updateList.run(name, type, now, id, this.accountId).changes === 0) return undefined;
      this.deleteItems.run(id);
      this.insertItems(id, type, items);
      return this.get(id)!;
    })();
  }

  /** Marks a list archived: it keeps its items but no longer suppresses leads. */
  archive(id: number, now: string): ListRecord | undefined {
    this.db
      .prepare('UPDATE lists SET deleted_at = coalesce(deleted_at, ?), updated_at = ? WHERE id = ? AND account_id = ?')
      .run(now, now, id, this.accountId);
    return this.get(id);
  }

  get(id: number): ListRecord | undefined {
    return this.byId.get(id, this.accountId) as ListRecord | undefined;
  }

  page(offset: number, limit: number): { total: number; rows: ListRecord[] } {
    return {
      total: this.countStmt.get(this.accountId) as number,
      rows: this.pageStmt.all(this.accountId, limit, offset) as ListRecord[],
    };
  }

  /** True when `value` is on one of the account's active lists of `type`. */
  isListed(type: ListType, value: string): boolean {
    return this.listedStmt.get(type, matchKey(type, value), this.accountId) !== undefined;
  }

  private insertItems(id: number, type: ListType, items: readonly string[]): void {
    for (const item of items) this.insertItem.run(id, type, matchKey(type, item));
  }
}
