// `npm run build`'s second step: tsc emits only JavaScript, so the files the code reads at
// start (Lua scripts, SQL definitions) and the console's static files are copied beside
// their modules in dist/.
import { cpSync } from 'node:fs';

const ASSET = /\.(lua|sql)$/;
const CONSOLE = /^src[\\/]console[\\/]/;
cpSync('src', 'dist/src', {
  recursive: true,
  filter: (source) => !/\.\w+$/.test(source) || ASSET.test(source) || CONSOLE.test(source),
});
