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
  // Python scripts the extension runs with `python -c` (extension/src/backend/preflight.py) are
  // imported as text, so the .py file stays the one copy that Python tests run too.
  loader: { '.py': 'text' },
};

const extension = {
  ...common,
  entryPoints: ['extension/src/extension.ts'],
  outfile: 'dist/extension.js',
  external: ['vscode'], // provided by VS Code at run time
};

// The training monitor's page (extension/media/monitor/page.js with uPlot and its CSS, no
// remote resources): dist/monitor/page.js and page.css, loaded by extension/src/monitor/monitorPanel.ts.
const monitorPage = {
  ...common,
  platform: 'browser',
  format: 'iife',
  target: 'es2022',
  entryPoints: { page: 'extension/media/monitor/page.js' },
  outdir: 'dist/monitor',
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

const builds = args.has('--tests') ? [tests] : [extension, monitorPage];
if (args.has('--watch')) {
  for (const options of builds) {
    const ctx = await esbuild.context(options);
    await ctx.watch();
  }
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
