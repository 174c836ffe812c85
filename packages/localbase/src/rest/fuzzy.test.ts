import { describe, expect, it } from 'vitest';
import { closestMatch, similarity } from './fuzzy.ts';

describe('closestMatch (PostgREST hint search)', () => {
  const names = ['list_venues', 'book_seat', 'cancel_booking', 'venue_stats'];
  it('finds a near name above the threshold, case-insensitively, and nothing for far names', () => {
    expect(closestMatch(names, 'list_venue', 0.75)).toBe('list_venues');
    expect(closestMatch(names, 'BOOK_SEATS', 0.75)).toBe('book_seat');
    expect(closestMatch(names, 'Book_Seat', 0.75)).toBe('book_seat');
    expect(closestMatch(names, 'refund', 0.75)).toBeNull();
    expect(closestMatch([], 'x', 0.1)).toBeNull();
  });
  it('parameter lists with the lower threshold', () => {
    expect(closestMatch(['(id, name)', '(city)'], '(id, nam)', 0.33)).toBe('(id, name)');
    expect(closestMatch(['(id, name)', '(city)'], '(cty)', 0.33)).toBe('(city)');
  });
  it('similarity is 1 − edit distance / longer length', () => {
    expect(similarity('abcd', 'abed')).toBe(0.75);
    expect(similarity('', '')).toBe(1);
  });
});
