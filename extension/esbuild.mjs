// Bundles the extension (and, with --tests, the TS unit tests) with esbuild.
// `node extension/esbuild.mjs [--watch] [--tests] [--production]`
import * as esbuild from 'esbuild';
import { readdirSync } from 'fs';

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

// Unit tests mirror the sources (tests/ts/unit/<folder>/<module>.test.ts for
// extension/src/<folder>/<module>.ts); one bundle per test, in the same folders under out/tests/.
const testDir = 'tests/ts/unit';
const tests = {
  ...common,
  entryPoints: readdirSync(testDir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `${testDir}/${f}`),
  outbase: testDir,
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
