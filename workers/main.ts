import '../src/config/dotenv.js';
import { run } from '../src/bin/run.js';

await run({ web: false, worker: true });
