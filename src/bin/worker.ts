import { run } from './run.js';

await run({ web: false, worker: true });
