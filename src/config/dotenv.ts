import { config } from 'dotenv';

// Imported first by every entry point, so `.env` in the working directory applies to the
// CLI in a second shell as much as to `npm start`. Variables already set win over the file.
config({ quiet: true });
