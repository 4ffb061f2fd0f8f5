import type { Board } from './board.js';

/**
 * What a standing is ranked in: one category of one period of a board, worldwide or in
 * one region. The same value names the ranking in Redis, in member aggregates and in the
 * final results; storage and services take it as it is.
 */
export interface Scope {
  board: Board;
  /** The period's key. */
  period: string;
  category: string;
  region: string;
}

/** A scope and one member in it: a placement asked among others. */
export type MemberInScope = Scope & { member: string };
