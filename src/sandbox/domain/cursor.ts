/**
 * Laravel's cursor: base64 of `{"id": <last id>, "_pointsToNextItems": <direction>}`.
 * Opaque to callers; the sandbox only needs the position and the direction.
 */
export interface Cursor {
  id: number;
  pointsToNextItems: boolean;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify({ id: cursor.id, _pointsToNextItems: cursor.pointsToNextItems })).toString(
    'base64url',
  );
}

/** undefined when the text is not a cursor this sandbox issued. */
export function decodeCursor(text: string): Cursor | undefined {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as {
      id?: unknown;
      _pointsToNextItems?: unknown;
    };
    if (!Number.isSafeInteger(value.id) || typeof value._pointsToNextItems !== 'boolean') return undefined;
    return { id: value.id as number, pointsToNextItems: value._pointsToNextItems };
  } catch {
    return undefined;
  }
}
