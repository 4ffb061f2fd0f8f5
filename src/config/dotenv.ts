import { config } from 'dotenv';

// Imported first by every entry point, so `.env` in the working directory applies to the
// CLI in a second shell as much as to `npm start`. Variables already set win over the file:
// `override: false` is spelled out because dotenv also reads DOTENV_CONFIG_OVERRIDE from the
// environment, and a stray one must not let a checked-in `.env` beat the deployment's settings.
config({ quiet: true, override: false });
