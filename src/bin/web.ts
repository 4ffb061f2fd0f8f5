import '../config/dotenv.js';
import cluster from 'node:cluster';
import { loadEnvOrExit } from '../config/env.js';
import { createLogger } from '../logger.js';
import { run } from './run.js';
import { runWebCluster } from './web-cluster.js';

const env = loadEnvOrExit();
if (env.WEB_PROCESSES > 1 && cluster.isPrimary) {
  runWebCluster(env.WEB_PROCESSES, createLogger(env.LOG_LEVEL), {
    delay: env.SHUTDOWN_DELAY_MS,
    timeout: env.SHUTDOWN_TIMEOUT_MS,
  });
} else await run({ web: true, worker: false });
