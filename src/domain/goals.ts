import type { SortOrder, SubscoreRule, TieBreak } from './ranking.js';

/** What `needed` depends on: the board's order, tie rule and subscore rule. */
export interface GoalRules {
  order: SortOrder;
  tieBreak: TieBreak;
  subscore: SubscoreRule;
}

/** The member chasing a target: its id and, while it has a score, its current scaled subscore. */
export interface Chaser {
  member: string;
  ranked: boolean;
  /** Scaled; on boards with a subscore, for a ranked member only. */
  subscore?: number;
}

/** An entry to catch: its member id, scaled score and (on boards with one) scaled subscore. */
export interface GoalTarget {
  member: string;
  scaled: number;
  subscore?: number;
}

/**
 * The scaled aggregate score at which `chaser` would rank ahead of `target` (or share its
 * rank, under `shared`) if it were reached now: the target's score when an equal score is
 * enough, else one unit (of the board's decimals) better.
 *
 * Reaching a score now means a reached time later than the target's: so an equal score
 * wins under `last`, loses under `first`, and under `member` wins only for an id whose bytes
 * sort first (member ids are ASCII, so code units compare as bytes). On a board with a
 * subscore, equal scores are ordered by subscore before the tie rule: the chaser's current
 * subscore decides, and a chaser without a score has none to order it ahead.
 */
export function neededToPass(rules: GoalRules, chaser: Chaser, target: GoalTarget): number {
  const better = rules.order === 'desc' ? 1 : -1;
  return equalScoreIsEnough(rules, chaser, target) ? target.scaled : target.scaled + better;
}

function equalScoreIsEnough(rules: GoalRules, chaser: Chaser, target: GoalTarget): boolean {
  if (rules.subscore) {
    if (!chaser.ranked || chaser.subscore === undefined) return false;
    const mine = chaser.subscore;
    const theirs = target.subscore ?? 0;
    if (mine !== theirs) return rules.subscore.order === 'desc' ? mine > theirs : mine < theirs;
  }
  switch (rules.tieBreak) {
    case 'last':
    case 'shared':
      return true;
    case 'first':
      return false;
    case 'member':
      return chaser.member < target.member;
  }
}
