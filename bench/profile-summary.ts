/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by package, as
 * shares of the sampled time, so profiles of different runs compare by share rather than by
 * noisy absolute numbers. Usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary <file.cpuprofile> [top]');
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

function where(url: string): string {
  if (!url) return '(native/V8)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return 'node core';
  const own = /\/(src|bench)\/(.*)$/.exec(url);
  return own ? `laurel ${own[1]}/${own[2]}` : url;
}

const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
const idle = [...selfUs.entries()]
  .filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)')
  .reduce((a, [, t]) => a + t, 0);
const busy = total - idle;
const fns = new Map<string, number>();
const pkgs = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  if (functionName === '(idle)') continue;
  const name = `${functionName || '(anonymous)'} ${where(url)}${url ? `:${lineNumber + 1}` : ''}`;
  fns.set(name, (fns.get(name) ?? 0) + us);
  const pkg =
    functionName === '(garbage collector)'
      ? '(garbage collector)'
      : functionName === '(program)'
        ? '(program)'
        : where(url).replace(/^laurel (src|workers)\/.*/, 'laurel $1');
  pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + us);
}
// Inclusive time of the frames a request passes through (a sample counts once per name).
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const { functionName, url } = byId.get(at)!.callFrame;
    if (!url || !functionName) continue;
    const name = `${functionName} ${where(url)}`;
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + us);
  }
}
const pct = (us: number) => `${((100 * us) / busy).toFixed(1)}%`;
const lines = [
  `${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (${((100 * busy) / total).toFixed(0)}%); shares below are of busy time`,
  '',
  '| self time by package | share |',
  '|---|---|',
  ...[...pkgs.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([k, v]) => `| ${k} | ${pct(v)} |`),
  '',
  '| self time by function | share |',
  '|---|---|',
  ...[...fns.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `| ${k.replace(/\|/g, '\\|')} | ${pct(v)} |`),
  '',
  '| inclusive time (self + callees) by function | share |',
  '|---|---|',
  ...[...inclusive.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `| ${k.replace(/\|/g, '\\|')} | ${pct(v)} |`),
];
process.stdout.write(`${lines.join('\n')}\n`);
