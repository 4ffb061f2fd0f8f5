import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DockerfileParser } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ENV_VARIABLES, parseEnv } from '../../src/config/env.js';
import { Metrics } from '../../src/observability/metrics.js';
import { QueueMemoryGuard } from '../../src/services/intake-backpressure.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const COMPOSE_ONLY = ['POSTGRES_PASSWORD', 'REDIS_PASSWORD', 'PUBLISH_ADDRESS', 'QUEUE_REDIS_MAXMEMORY'];

/** `node dist/x/y.js` (what the image runs) must come from a source file x/y.ts that the build compiles. */
function expectBuiltEntry(command: string[]) {
  expect(command[0]).toBe('node');
  const built = command[1]!;
  expect(built).toMatch(/^dist\/.+\.js$/);
  expect(existsSync(path.join(ROOT, built.replace(/^dist\//, '').replace(/\.js$/, '.ts'))), built).toBe(true);
}

/** Metric names the code registers, with the series a histogram exposes. */
function knownMetricNames(): Set<string> {
  const names = new Set<string>();
  const { registry } = new Metrics(() => []);
  // The context registers the queue memory gauge beside them (collected at scrape time only,
  // so no Redis is needed to list its name).
  new QueueMemoryGuard(undefined as never, 0.9, undefined as never).register(registry);
  for (const m of registry.getMetricsAsArray()) {
    names.add(m.name);
    for (const suffix of ['_bucket', '_count', '_sum']) names.add(m.name + suffix);
  }
  return names;
}
const metricsIn = (expr: string) => expr.match(/\blaurel_[a-z_]+\b/g) ?? [];

describe('Dockerfile', () => {
  const text = read('Dockerfile');
  const dockerfile = DockerfileParser.parse(text);
  const stages = dockerfile.getFROMs();
  const runtimeStart = stages.at(-1)!.getRange().start.line;
  const runtime = dockerfile.getInstructions().filter((i) => i.getRange().start.line >= runtimeStart);
  const args = (keyword: string) =>
    runtime.filter((i) => i.getKeyword() === keyword).map((i) => i.getArgumentsContent() ?? '');

  it('passes the linter (dockerfile-utils; Debian has no hadolint package)', () => {
    expect(
      validate(text).map(
        (d) => `${d.range.start.line + 1}: ${typeof d.message === 'string' ? d.message : d.message.value}`,
      ),
    ).toEqual([]);
  });

  it('builds in one stage and runs from pinned images with production dependencies only, as a non-root user', () => {
    expect(stages.length).toBe(2);
    for (const from of stages) expect(from.getImageTag() ?? 'latest').not.toBe('latest');
    expect(stages.at(-1)!.getBuildStage()).toBe('runtime');
    expect(args('RUN').some((r) => /npm ci\b.*--omit=dev/.test(r))).toBe(true);
    expect(
      args('COPY')
        .filter((c) => c.includes('--from='))
        .every((c) => /--from=build \/app\/dist /.test(c)),
    ).toBe(true);
    expect(args('USER')).toHaveLength(1);
    expect(args('USER')[0]).not.toMatch(/^(root|0)$/);
    expect(runtime.map((i) => i.getArgumentsContent() ?? '').join('\n')).not.toMatch(/\btsx\b/);
  });

  it('runs a Node major that package.json engines names, as does the Node running these tests', () => {
    // engines reads `>=A.B <C || >=D <E`: the majors the tests run on (here) and the image runs.
    const engines: string = JSON.parse(read('package.json')).engines.node;
    const ranges = engines.split('||').map((range) => {
      const [, low, high] = /^\s*>=(\d+(?:\.\d+)*)\s+<(\d+)\s*$/.exec(range) ?? [];
      expect(low, `engines range "${range}" needs a lower and an upper bound`).toBeDefined();
      return { low: low!.split('.').map(Number), high: Number(high) };
    });
    const covers = (version: number[]) =>
      ranges.some(({ low, high }) => {
        const [major = 0] = version;
        const below = low.findIndex((n, i) => (version[i] ?? 0) !== n);
        return major < high && (below === -1 || (version[below] ?? 0) > low[below]!);
      });
    const images = stages.map((from) => `${from.getImageName()}:${from.getImageTag()}`);
    expect(new Set(images).size, 'both stages build on one Node image').toBe(1);
    const [, imageMajor] = /^node:(\d+)-/.exec(images[0]!) ?? [];
    expect(covers([Number(imageMajor)]), `${images[0]} against engines ${engines}`).toBe(true);
    expect(covers(process.versions.node.split('.').map(Number)), `Node ${process.version}`).toBe(true);
  });

  it('copies into the build stage every folder the build compiles', () => {
    const build = dockerfile
      .getInstructions()
      .filter((i) => i.getRange().start.line < runtimeStart && i.getKeyword() === 'COPY');
    const copied = build.map((i) => (i.getArgumentsContent() ?? '').split(/\s+/)[0]);
    const compiled = (JSON.parse(read('tsconfig.build.json')) as { include: string[] }).include;
    for (const folder of compiled) expect(copied, folder).toContain(folder);
  });

  it('runs node itself (signals reach it) with a HEALTHCHECK, both in exec form', () => {
    const [cmd] = args('CMD');
    expectBuiltEntry(JSON.parse(cmd!));
    const [health] = args('HEALTHCHECK');
    expectBuiltEntry(JSON.parse(health!.replace(/^.*?CMD\s+/, '')));
    expect(args('ENTRYPOINT')).toEqual([]);
  });

  it('.dockerignore keeps secrets and host binaries out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['.env', 'node_modules', 'dist', '.git']) expect(ignored).toContain(entry);
  });
});

describe('docker-compose files', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true });
  const dev = parse(read('docker-compose.dev.yml'), { merge: true });

  it('publish Postgres and Redis on 127.0.0.1 only, with passwords', () => {
    for (const file of [compose, dev]) {
      for (const name of ['postgres', 'redis']) {
        for (const port of file.services[name].ports) expect(String(port)).toMatch(/^127\.0\.0\.1:/);
      }
      expect(file.services.postgres.environment.POSTGRES_HOST_AUTH_METHOD).toBeUndefined();
      expect(file.services.postgres.environment.POSTGRES_PASSWORD).toBeTruthy();
      expect(file.services.redis.command).toContain('--requirepass');
    }
  });

  it('run the queue Redis of the production file durable (appendfsync always) and bounded (maxmemory)', () => {
    const args: string[] = compose.services.redis.command;
    const option = (name: string) => args[args.indexOf(name) + 1];
    expect([option('--appendonly'), option('--appendfsync'), option('--maxmemory-policy')]).toEqual([
      'yes',
      'always',
      'noeviction',
    ]);
    expect(option('--maxmemory')).toMatch(/QUEUE_REDIS_MAXMEMORY/);
  });

  it('runs the image: migrate once, then web and worker with node and Laurel variables only', () => {
    expect(compose.services.web.depends_on.migrate.condition).toBe('service_completed_successfully');
    for (const name of ['migrate', 'web', 'worker']) {
      const service = compose.services[name];
      expect(service.build).toBe('.');
      expectBuiltEntry(service.command);
      for (const variable of Object.keys(service.environment)) expect(ENV_VARIABLES).toContain(variable);
    }
  });
});

describe('commands users run', () => {
  it('package.json scripts and the Procfile start node itself, never the tsx wrapper', () => {
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    for (const name of ['start', 'web', 'worker', 'migrate', 'laurel']) {
      expect(scripts[name], name).toMatch(/^exec node --import tsx \S+\.ts$/);
      expect(existsSync(path.join(ROOT, scripts[name]!.split(' ').at(-1)!))).toBe(true);
    }
    for (const line of read('Procfile').trim().split('\n')) expectBuiltEntry(line.replace(/^\w+:\s*/, '').split(/\s+/));
  });

  it('npm run up hands its process to Laurel: the script execs bash, whose last command execs npm start', () => {
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    expect(scripts.up).toBe('exec bash scripts/up.sh');
    const commands = read('scripts/up.sh')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(commands.at(-1)).toBe('exec npm start');
  });
});

describe('.env.example', () => {
  const lines = read('.env.example').split('\n');
  const names = lines.map((l) => /^#?([A-Z][A-Z0-9_]+)=/.exec(l)?.[1]).filter((n): n is string => n !== undefined);

  it('lists every variable the code reads, once, each after a line saying what it means', () => {
    expect([...names].sort()).toEqual([...ENV_VARIABLES, ...COMPOSE_ONLY].sort());
    for (const [i, line] of lines.entries()) {
      if (/^#?[A-Z][A-Z0-9_]+=/.test(line) && !COMPOSE_ONLY.some((n) => line.includes(n))) {
        expect(lines[i - 1], `${line} has no explanation`).toMatch(/^# \S/);
      }
    }
  });
});

describe('Kubernetes manifests (deploy/k8s)', () => {
  const docs = readdirSync(path.join(ROOT, 'deploy/k8s'))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(read(`deploy/k8s/${f}`)).map((d) => d.toJS()));
  const ofKind = (kind: string) => docs.filter((d) => d.kind === kind);
  const named = (kind: string, name: string) => ofKind(kind).find((d) => d.metadata.name === name);
  const config = ofKind('ConfigMap')[0].data as Record<string, string>;
  const secret = named('Secret', 'laurel').stringData as Record<string, string>;

  it('has web and worker Deployments, a Service, disruption budgets, a migrate Job, a ConfigMap and a Secret', () => {
    expect(
      ofKind('Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(['laurel-web', 'laurel-worker']);
    expect(
      ofKind('Service')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(['laurel-web', 'redis-queue']);
    expect(ofKind('PodDisruptionBudget')).toHaveLength(2);
    expect(ofKind('Job')).toHaveLength(1);
  });

  it('replaces workers all at once (two key layouts never written at once) and rolls web pods one by one', () => {
    expect(named('Deployment', 'laurel-worker').spec.strategy).toEqual({ type: 'Recreate' });
    expect(named('Deployment', 'laurel-web').spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
    });
  });

  it('runs the queue Redis durable (appendfsync always) and bounded (maxmemory, noeviction)', () => {
    const args: string[] = named('StatefulSet', 'redis-queue').spec.template.spec.containers[0].args;
    const option = (name: string) => args[args.indexOf(name) + 1];
    expect([option('--appendonly'), option('--appendfsync'), option('--maxmemory-policy')]).toEqual([
      'yes',
      'always',
      'noeviction',
    ]);
    expect(option('--maxmemory')).toMatch(/^\d+[kmg]b$/);
    expect(secret.REDIS_URL).toContain('@redis-queue:');
  });

  it('configures only variables the code knows, with values its schema accepts', () => {
    for (const name of [...Object.keys(config), ...Object.keys(secret)]) expect(ENV_VARIABLES).toContain(name);
    // The placeholders are to be replaced; any generated secret is long enough.
    const ADMIN_API_KEY = 'f3a9c1e07b5d42a8961ce0d7b3f4a2c5';
    const PLAYER_TOKEN_SECRET = '0d4b8e2a9f6c13e75a0b9d8c2f4e6a71';
    expect(() => parseEnv({ ...config, ...secret, ADMIN_API_KEY, PLAYER_TOKEN_SECRET })).not.toThrow();
  });

  it('ships admin key and player token placeholders Laurel refuses, so an unchanged apply cannot start', () => {
    for (const name of ['ADMIN_API_KEY', 'PLAYER_TOKEN_SECRET']) {
      expect(secret[name]).toMatch(/replace me/i);
      const others = {
        ADMIN_API_KEY: 'f3a9c1e07b5d42a8961ce0d7b3f4a2c5',
        PLAYER_TOKEN_SECRET: '0d4b8e2a9f6c13e75a0b9d8c2f4e6a71',
      };
      expect(() => parseEnv({ ...config, ...secret, ...others, [name]: secret[name] })).toThrow(new RegExp(name));
    }
  });

  it('has Prometheus scrape each pod on the port it listens on, with a metrics key', () => {
    for (const deployment of ofKind('Deployment')) {
      const { annotations } = deployment.spec.template.metadata;
      const worker = deployment.metadata.name === 'laurel-worker';
      expect(annotations, deployment.metadata.name).toEqual({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': worker ? config.METRICS_PORT : config.PORT,
        'prometheus.io/path': '/metrics',
      });
    }
    const [job] = parse(read('deploy/prometheus/scrape.yml')).scrape_configs;
    expect(job.authorization).toMatchObject({ type: 'Bearer', credentials_file: expect.any(String) });
    expect(read('deploy/prometheus/scrape.yml')).toContain('--role metrics');
    const keeps = job.relabel_configs.filter((r: any) => r.action === 'keep').map((r: any) => r.source_labels[0]);
    expect(keeps).toEqual([
      '__meta_kubernetes_pod_label_app_kubernetes_io_name',
      '__meta_kubernetes_pod_annotation_prometheus_io_scrape',
    ]);
  });

  it('probes /readyz and /healthz on the port each process listens on, and drains before it is killed', () => {
    for (const deployment of ofKind('Deployment')) {
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      expectBuiltEntry(container.command);
      const worker = container.command[1] === 'dist/src/bin/worker.js';
      const expectedPort = Number(worker ? config.METRICS_PORT : config.PORT);
      const portByName = new Map(container.ports.map((p: any) => [p.name, p.containerPort]));
      for (const [probe, probePath] of [
        ['readinessProbe', '/readyz'],
        ['livenessProbe', '/healthz'],
      ] as const) {
        expect(container[probe].httpGet.path).toBe(probePath);
        expect(portByName.get(container[probe].httpGet.port)).toBe(expectedPort);
      }
      for (const from of container.envFrom) expect([from.configMapRef?.name, from.secretRef?.name]).toContain('laurel');
      const preStopSeconds = Number(container.lifecycle.preStop.exec.command.at(-1));
      expect(preStopSeconds).toBeGreaterThan(0);
      const drainSeconds =
        preStopSeconds + (Number(config.SHUTDOWN_DELAY_MS) + Number(config.SHUTDOWN_TIMEOUT_MS)) / 1000;
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(drainSeconds);
      const labels = deployment.spec.template.metadata.labels;
      expect(
        ofKind('PodDisruptionBudget').some((b) =>
          Object.entries(b.spec.selector.matchLabels).every(([k, v]) => labels[k] === v),
        ),
      ).toBe(true);
    }
    const service = named('Service', 'laurel-web');
    const web = ofKind('Deployment').find((d) => d.metadata.name === 'laurel-web');
    expect(web.spec.template.spec.containers[0].ports.map((p: any) => p.name)).toContain(
      service.spec.ports[0].targetPort,
    );
    const [job] = ofKind('Job');
    const migrate = job.spec.template.spec.containers[0];
    expectBuiltEntry(migrate.command);
    for (const e of migrate.env) expect(ENV_VARIABLES).toContain(e.name);
  });
});

describe('monitoring (deploy/prometheus, deploy/grafana)', () => {
  const known = knownMetricNames();

  it('alert rules are well formed and use metrics the code exports', () => {
    const rules = parse(read('deploy/prometheus/alerts.yml')).groups.flatMap((g: any) => g.rules);
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      expect(rule.alert).toMatch(/^Laurel[A-Za-z]+$/);
      expect(typeof rule.expr).toBe('string');
      expect(['page', 'warn']).toContain(rule.labels.severity);
      expect(rule.annotations.summary).toBeTruthy();
      for (const name of metricsIn(rule.expr)) expect(known, name).toContain(name);
    }
    expect(rules.flatMap((r: any) => metricsIn(r.expr))).toContain('laurel_queue_jobs');
    // An alert on the queue backlog and one on the queue Redis' memory.
    expect(rules.flatMap((r: any) => metricsIn(r.expr))).toContain('laurel_queue_redis_memory_bytes');
    // docs/operations.md names these rules rather than restating them.
    for (const name of ['LaurelQueueRedisMemoryHigh', 'LaurelQueueBacklog', 'LaurelFailedJobs'])
      expect(rules.map((r: any) => r.alert)).toContain(name);
  });

  // scripts/test-setup.sh (npm test's pretest) installs Debian's prometheus package for it.
  it('promtool accepts the alert rules', () => {
    const promtool = spawnSync('sh', ['-c', 'command -v promtool']).status === 0;
    expect(promtool, 'promtool must be installed (scripts/test-setup.sh)').toBe(true);
    expect(
      execFileSync('promtool', ['check', 'rules', path.join(ROOT, 'deploy/prometheus/alerts.yml')]).toString(),
    ).toMatch(/SUCCESS/);
  });

  it('the Grafana dashboard charts lag, latency per route, events by outcome, queue depth, rebuild and close times', () => {
    const dashboard = JSON.parse(read('deploy/grafana/laurel.json'));
    const exprs: string[] = dashboard.panels.flatMap((p: any) => p.targets.map((t: any) => t.expr));
    for (const name of exprs.flatMap(metricsIn)) expect(known, name).toContain(name);
    const used = new Set(exprs.flatMap(metricsIn));
    for (const name of [
      'laurel_event_visible_lag_seconds_bucket',
      'laurel_events_total',
      'laurel_queue_jobs',
      'laurel_rebuild_scope_duration_seconds_bucket',
      'laurel_period_close_duration_seconds_bucket',
    ]) {
      expect(used).toContain(name);
    }
    expect(exprs.some((e) => /laurel_http_request_duration_seconds_bucket/.test(e) && /\broute\b/.test(e))).toBe(true);
  });
});

describe('license and release', () => {
  it('is Apache-2.0 and 0.2.0 is in the changelog', () => {
    const pkg = JSON.parse(read('package.json'));
    expect(pkg.license).toBe('Apache-2.0');
    expect(read('LICENSE')).toMatch(/Apache License\s+Version 2\.0/);
    expect(read('CHANGELOG.md')).toContain(`## [${pkg.version}]`);
  });
});
