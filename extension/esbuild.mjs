// Bundles the extension (and, with --tests, the TS unit tests) with esbuild.
// `node extension/esbuild.mjs [--watch] [--tests] [--production]`
import * as esbuild from 'esbuild';
import { readdirSync } from 'fs';
import { join } from 'path';

const args = new Set(process.argv.slice(2));
const production = args.has('--production');

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: !production,
  minify: production,
  logLevel: 'info',
};

const extension = {
  ...common,
  entryPoints: ['extension/src/extension.ts'],
  outfile: 'dist/extension.js',
  external: ['vscode'], // provided by VS Code at run time
};

// Unit tests cover the modules that do not import `vscode`; bundling one file per test.
const testDir = 'tests/ts/unit';
const tests = {
  ...common,
  entryPoints: readdirSync(testDir).filter((f) => f.endsWith('.test.ts')).map((f) => join(testDir, f)),
  outdir: 'out/tests',
  external: ['vscode'],
};

const options = args.has('--tests') ? tests : extension;
if (args.has('--watch')) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
