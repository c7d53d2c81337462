/** One page of a list every store answers: its items, and whether a later page has more. */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
}
