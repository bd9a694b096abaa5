/** The reader's filter: the union of what subscribers and consumers declared. */
import { describe, expect, it } from 'vitest';
import { covers, filterOf, wants } from '../../runtime/feed/read.ts';

const change = (modelName: string, eventType: string) => ({
  position: { tx: '1', seq: 1 }, eventId: 'e', eventType, modelName, recordId: 'r', tenantId: null, version: 1, actorId: null, occurredAt: '',
});

describe('feed interest', () => {
  it('is everything as soon as one interest names no streams', () => {
    expect(filterOf([{ streams: ['Company'] }, {}])).toBeNull();
    expect(filterOf([])).toEqual({ streams: [], events: [] });
  });

  it('unites whole streams and event types, a whole stream absorbing its event types', () => {
    expect(filterOf([
      { streams: ['Job'], eventTypes: ['JobSucceeded', 'JobDead'] },
      { streams: ['Deal', 'Company'] },
      { streams: ['Job', 'Deal'], eventTypes: ['JobDead', 'Created'] },
    ])).toEqual({ streams: ['Company', 'Deal'], events: ['Job:Created', 'Job:JobDead', 'Job:JobSucceeded'] });
  });

  it('knows when a read holds what is wanted now', () => {
    const narrow = filterOf([{ streams: ['Job'], eventTypes: ['JobDead'] }]);
    const wide = filterOf([{ streams: ['Job'] }, { streams: ['Deal'] }]);
    expect(covers(null, wide)).toBe(true);
    expect(covers(wide, null)).toBe(false);
    expect(covers(wide, narrow)).toBe(true);
    expect(covers(narrow, wide)).toBe(false);
    expect(covers(narrow, filterOf([{ streams: ['Job'], eventTypes: ['JobSucceeded'] }]))).toBe(false);
  });

  it('matches a change against one interest', () => {
    expect(wants({}, change('Deal', 'Created'))).toBe(true);
    expect(wants({ streams: ['Deal'] }, change('Deal', 'Updated'))).toBe(true);
    expect(wants({ streams: ['Job'], eventTypes: ['JobDead'] }, change('Job', 'JobLeased'))).toBe(false);
    expect(wants({ streams: ['Job'], eventTypes: ['JobDead'] }, change('Job', 'JobDead'))).toBe(true);
  });
});
