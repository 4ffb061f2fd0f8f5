import { Command, Option } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { loadEnvOrExit } from '../config/env.js';
import { createContext, type AppContext } from '../context.js';
import { createLogger } from '../logger.js';
import { describeMigration, migrateDatabase } from '../storage/postgres/migrator.js';
import { waitUntilReady } from '../storage/redis/connections.js';
import { rebuildStatus, requestRebuild, requestScopeRebuild } from '../services/rebuild-service.js';
import { verifyLeaderboards } from '../services/verify-service.js';
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { createApiKey, listApiKeys, revokeApiKey, ROLES, type Role } from '../services/api-keys.js';
import { LAUREL_VERSION } from '../version.js';
import { putBoard } from '../services/boards-service.js';
import { runDemo } from './demo.js';
import { InvalidInput, LaurelError, NotFound } from '../domain/errors.js';
import { archiveLedger } from '../services/ledger-archive.js';
import {
  countDefaultPartition,
  listLedgerArchives,
  listLedgerPartitions,
  unclosedPeriodsIn,
} from '../storage/postgres/ledger-partitions.js';

async function withContext<T>(
  fn: (ctx: AppContext) => Promise<T>,
  options: { redis: boolean } = { redis: true },
): Promise<T> {
  const env = loadEnvOrExit();
  const ctx = createContext(env, {
    log: createLogger(process.env.LOG_LEVEL ?? 'warn', process.stderr),
    name: 'laurel-cli',
  });
  try {
    if (options.redis) {
      await waitUntilReady(ctx.queueRedis);
      await waitUntilReady(ctx.leaderboard.redis);
    }
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

/**
 * The `laurel` command. `configure` runs on the root before any subcommand is added, so what
 * it sets (exitOverride, output) is inherited by all of them: tests parse --help in process.
 */
export function buildProgram(configure?: (root: Command) => void): Command {
  const program = new Command()
    .name('laurel')
    .description('Operate a Laurel deployment (reads the same environment as the service).')
    .version(LAUREL_VERSION, '-V, --version', "print Laurel's version")
    .showHelpAfterError();
  configure?.(program);

  program
    .command('migrate')
    .description('apply database migrations up to the latest, then install changed stored functions')
    .action(async () => {
      console.log(describeMigration(await migrateDatabase(loadEnvOrExit().DATABASE_URL)));
    });

  program
    .command('rebuild')
    .description(
      'rebuild leaderboards from Postgres (all open periods by default) and show progress; workers do the work',
    )
    .option('--board <id>', 'only this board')
    .option('--period <key>', 'only this period of the board (a key or "current")')
    .option('--from-events', 'recompute the aggregates from the event ledger first', false)
    .addOption(new Option('--no-wait', 'enqueue and exit without waiting'))
    .action(async (opts: { board?: string; period?: string; fromEvents: boolean; wait: boolean }) => {
      await withContext(async (ctx) => {
        const body = {
          ...(opts.board ? { board: opts.board } : {}),
          ...(opts.period ? { period: opts.period } : {}),
          fromEvents: opts.fromEvents,
        };
        const { rebuildId, scopes } = await requestRebuild(ctx, body, 'cli');
        console.log(`rebuild ${rebuildId}: ${scopes} scope(s)`);
        if (!opts.wait) return;
        const bar = new SingleBar(
          { format: 'rebuilding [{bar}] {percentage}% | {value}/{total} scopes', hideCursor: true },
          Presets.shades_classic,
        );
        bar.start(Math.max(1, scopes), 0);
        for (;;) {
          const status = await rebuildStatus(ctx, rebuildId);
          bar.update(status.progress.done);
          if (status.state === 'completed' || status.state === 'failed' || status.progress.failed > 0) {
            bar.stop();
            const members = status.scopes.reduce((n, s) => n + s.members, 0);
            console.log(
              `${status.state}: ${status.progress.done} scope(s), ${members} ranked member(s), ${status.progress.failed} failed`,
            );
            if (status.state !== 'completed') process.exitCode = 1;
            return;
          }
          await new Promise((r) => setTimeout(r, 500));
        }
      });
    });

  program
    .command('verify')
    .description(
      'compare every scope in Redis with Postgres; print each difference (exit 1 if any) and, apart, scopes Redis does not hold',
    )
    .option('--board <id>', 'only this board')
    .option('--period <key>', 'only this period (default: every open period)')
    .option('--rebuild-missing', 'queue a rebuild of each category Redis does not hold')
    .action(async (opts: { board?: string; period?: string; rebuildMissing?: boolean }) => {
      await withContext(async (ctx) => {
        const { scopes, differences, missing } = await verifyLeaderboards(ctx, opts);
        for (const d of differences) console.log(`${d.board} ${d.period} ${d.category}/${d.region}: ${d.problem}`);
        for (const m of missing)
          console.log(
            `${m.board} ${m.period} ${m.category}/${m.region}: not in Redis (read from Postgres, rebuilt on first read)`,
          );
        console.log(
          differences.length
            ? `${differences.length} difference(s) in ${scopes} scope(s)`
            : `no difference in ${scopes} scope(s)`,
        );
        if (missing.length > 0) console.log(`${missing.length} scope(s) not in Redis: no difference`);
        if (opts.rebuildMissing) {
          const categories = new Map(missing.map((m) => [`${m.board}|${m.period}|${m.category}`, m]));
          for (const m of categories.values())
            await requestScopeRebuild(ctx, { board: m.board, period: m.period, category: m.category }, 'cli');
          console.log(`${categories.size} rebuild(s) queued`);
        }
        if (differences.length) process.exitCode = 1;
      });
    });

  const keys = program.command('keys').description('manage API keys');
  keys
    .command('create')
    .description('create a key (printed once; stored hashed)')
    .requiredOption('--name <name>', 'who uses it, for logs and audit')
    .addOption(new Option('--role <role>', 'what it may do').choices(ROLES).makeOptionMandatory())
    .action(async (opts: { name: string; role: Role }) => {
      await withContext(async (ctx) => {
        const { key, record } = await createApiKey(ctx.db, opts.name, opts.role);
        console.log(`id:   ${record.id}\nname: ${record.name}\nrole: ${record.role}\nkey:  ${key}`);
      });
    });
  keys
    .command('list')
    .description('list every key, revoked ones too: id, name, role, created, revoked (never the key itself)')
    .action(async () => {
      await withContext(
        async (ctx) => {
          const rows = (await listApiKeys(ctx.db)).map((k) => [
            k.id,
            k.name,
            k.role,
            k.createdAt.toISOString(),
            k.revokedAt?.toISOString() ?? '-',
          ]);
          if (rows.length === 0) {
            console.log('no keys (ADMIN_API_KEY from the environment is not stored)');
            return;
          }
          printTable(['id', 'name', 'role', 'created', 'revoked'], rows);
        },
        { redis: false },
      );
    });
  keys
    .command('revoke <id>')
    .description('revoke a key by id')
    .action(async (id: string) => {
      await withContext(async (ctx) => {
        if (!(await revokeApiKey(ctx.db, id))) throw new NotFound(`no active key with id ${id}`);
        console.log(`revoked ${id}`);
      });
    });

  program
    .command('boards')
    .description('manage board definitions')
    .command('apply <file>')
    .description('create or update boards from a JSON or YAML file: { boards: [{ id, ...definition }] } or one board')
    .action(async (file: string) => {
      await withContext(async (ctx) => {
        const parsed = parseYaml(await readFile(file, 'utf8')) as { boards?: unknown[] } & Record<string, unknown>;
        const boards = (Array.isArray(parsed?.boards) ? parsed.boards : [parsed]) as Array<
          { id?: unknown } & Record<string, unknown>
        >;
        for (const { id, ...definition } of boards) {
          // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a YAML id may be a number; anything else becomes text the id check refuses
          const { created } = await putBoard(ctx, String(id ?? ''), definition).catch((err: unknown) => {
            // Several boards per file: say which one is at fault.
            throw err instanceof InvalidInput
              ? new InvalidInput(`board "${String(id)}": ${err.message}`, err.details, err.code)
              : err;
          });
          console.log(`${created ? 'created' : 'updated'} ${String(id)}`);
        }
      });
    });

  const partitions = program
    .command('partitions')
    .description('the monthly partitions of the event ledger (Postgres only)');
  partitions
    .command('list')
    .description('attached months (estimated events, periods not closed), the default partition, archived months')
    .action(async () => {
      await withContext(
        async (ctx) => {
          for (const p of await listLedgerPartitions(ctx.db)) {
            const unclosed = await unclosedPeriodsIn(ctx.db, p.name);
            const state =
              unclosed.length === 0
                ? 'no open period'
                : `open: ${unclosed.map((u) => `${u.board}/${u.period}`).join(', ')}`;
            const events = p.estimatedEvents === null ? 'not analyzed yet' : `~${p.estimatedEvents} events`;
            console.log(`${p.month}  ${p.name}  ${events}  ${state}`);
          }
          console.log(
            `default  score_events_default  ${await countDefaultPartition(ctx.db)} events (months without a partition yet)`,
          );
          for (const a of await listLedgerArchives(ctx.db)) {
            const where = a.droppedAt ? 'dropped' : `ledger_archive.${a.table}`;
            console.log(
              `${a.month}  archived ${a.detachedAt.toISOString()}  ${a.events ?? '?'} events  ${where}${a.file ? `  file ${a.file}` : ''}`,
            );
          }
        },
        { redis: false },
      );
    });
  partitions
    .command('archive')
    .description(
      'detach every month before --before whose periods are all closed; keep it in schema ledger_archive, or write and drop it',
    )
    .requiredOption('--before <YYYY-MM>', 'archive the months strictly before this one')
    .option('--out <dir>', 'write each month to <dir>/score_events_<YYYY-MM>.csv.gz')
    .option('--drop', 'drop the detached table once its file is written (needs --out)', false)
    .action(async (opts: { before: string; out?: string; drop: boolean }) => {
      await withContext(
        async (ctx) => {
          const report = await archiveLedger(ctx, {
            before: opts.before,
            ...(opts.out ? { outDir: opts.out } : {}),
            drop: opts.drop,
          });
          for (const a of report.archived) {
            console.log(
              `${a.month}  ${a.events} events  ${a.dropped ? 'dropped' : a.table}${a.file ? `  file ${a.file}` : ''}`,
            );
          }
          for (const r of report.refused) console.log(`${r.month}  refused: ${r.reason}`);
          if (report.archived.length === 0 && report.refused.length === 0)
            console.log(`nothing to archive before ${opts.before}`);
          if (report.refused.length > 0) process.exitCode = 1;
        },
        { redis: false },
      );
    });

  program
    .command('demo')
    .description('create demo boards and players, then stream realistic events into a running Laurel')
    .option('--url <url>', 'where Laurel listens', `http://127.0.0.1:${process.env.PORT ?? 3000}`)
    .option('--seconds <n>', 'how long to stream events', (v) => Number.parseInt(v, 10), 60)
    .action(async (opts: { url: string; seconds: number }) => {
      await withContext((ctx) => runDemo(ctx, { ...opts, log: (line) => console.log(line) }));
    });
  return program;
}

/** Rows under a header, each column as wide as its widest cell (the last one unpadded). */
function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [header, ...rows]) {
    console.log(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
  }
}

/** The message and every detail of a failure, as the HTTP error shape would name them. */
export function describeFailure(err: unknown): string {
  if (!(err instanceof Error)) return `laurel: ${String(err)}`;
  const lines = [`laurel: ${err.message}`];
  for (const d of err instanceof LaurelError ? (err.details ?? []) : []) {
    lines.push(`  ${d.index === undefined ? '' : `event ${d.index}: `}${d.path}: ${d.message}`);
  }
  return lines.join('\n');
}
