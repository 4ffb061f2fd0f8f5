#!/usr/bin/env node
import '../config/dotenv.js';
import { buildProgram, describeFailure } from './program.js';

await buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    console.error(describeFailure(err));
    process.exitCode = 1;
  });
