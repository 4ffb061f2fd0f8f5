import '../config/dotenv.js';
import { z } from 'zod';
import { describeMigration, migrateDatabase } from '../storage/postgres/migrator.js';

// The release phase needs only the database, so it does not demand the whole environment.
const url = z
  .string()
  .regex(/^postgres(ql)?:\/\//)
  .safeParse(process.env.DATABASE_URL);
if (!url.success) {
  process.stderr.write(
    'invalid environment: DATABASE_URL is required (a postgres:// URL; set it in the environment or in .env)\n',
  );
  process.exit(1);
}
try {
  process.stdout.write(`${describeMigration(await migrateDatabase(url.data))}\n`);
} catch (err) {
  process.stderr.write(`migration failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
