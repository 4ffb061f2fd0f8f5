import { run } from './run.js';

await run({ web: true, worker: false });
