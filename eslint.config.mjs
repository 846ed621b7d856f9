// ESLint flat config: typescript-eslint's recommended rules for the extension (extension/src)
// and its unit tests (tests/ts); ESLint's recommended rules for the webview scripts
// (extension/media/*.js, browser globals). Types are checked by tsc (`npm run lint` runs both).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['out/**', 'dist/**', 'node_modules/**', 'extension/bundled/**', '.tools/**', '.venv/**', '**/*.d.ts'],
  },
  {
    files: ['extension/src/**/*.ts', 'tests/ts/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
      curly: ['error', 'all'],
    },
  },
  {
    files: ['tests/ts/**/*.ts'],
    rules: {
      // The fakes of the vscode API are loosely typed on purpose.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['extension/media/*.js', 'extension/media/data/*.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'script',
      globals: { ...globals.browser, acquireVsCodeApi: 'readonly' },
    },
    rules: { eqeqeq: ['error', 'always'], curly: ['error', 'all'] },
  },
  {
    // The training monitor's page: ES modules bundled with uPlot by esbuild (dist/monitor/page.js).
    files: ['extension/media/monitor/*.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'module',
      globals: { ...globals.browser, acquireVsCodeApi: 'readonly' },
    },
    rules: { eqeqeq: ['error', 'always'], curly: ['error', 'all'] },
  },
  {
    files: ['extension/esbuild.mjs', 'eslint.config.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
);
