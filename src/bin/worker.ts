import '../config/dotenv.js';
import { run } from './run.js';

await run({ web: false, worker: true });
