import pg from 'pg';
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import type { Database } from '../../src/storage/postgres/schema.js';

/** A node of a Postgres plan (EXPLAIN's JSON), as the tests read it. */
export type PlanNode = Record<string, any>;

/** Every node of a plan, the plan itself included. */
export function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...((plan.Plans ?? []) as PlanNode[]).flatMap(nodesOf)];
}

/**
 * The plans of the statements a repository function runs: `run` gets a database handle that
 * records each statement, and each one is then explained (with ANALYZE: a recursive CTE's
 * subplans appear in the JSON plan only once it has run) on the same database.
 */
export async function plansOf(
  databaseUrl: string,
  run: (db: Kysely<Database>) => Promise<unknown>,
  options: { analyze: boolean },
): Promise<PlanNode[][]> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const captured: CompiledQuery[] = [];
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (e) => {
      if (e.level === 'query') captured.push(e.query);
    },
  });
  try {
    await run(db);
    const plans: PlanNode[][] = [];
    for (const query of captured) {
      const { rows } = await pool.query(`EXPLAIN (${options.analyze ? 'ANALYZE, ' : ''}FORMAT JSON) ${query.sql}`, [
        ...query.parameters,
      ]);
      plans.push(nodesOf((rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]!.Plan));
    }
    return plans;
  } finally {
    await db.destroy();
  }
}
