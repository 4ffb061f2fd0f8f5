import '../config/dotenv.js';
import { run } from './run.js';

// Development: intake, query API and workers in one process.
await run({ web: true, worker: true });
