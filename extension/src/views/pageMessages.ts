/**
 * What the model-view pages may ask the extension: `ready`, `refresh`, and `openLocation` of a
 * file the view on show names (nothing else is opened). Pure logic.
 */
import { obj } from './payload';
import type { ModelPageMessage, ModelPageView, Target } from './viewTypes';

/** The files a page may ask to open: the locations in its own view, nothing else. */
export function allowedTargets(view: ModelPageView | undefined): Set<string> {
  const files = new Set<string>();
  if (!view || view.kind === 'message') {
    return files;
  }
  const add = (t: Target | null) => {
    if (t) {
      files.add(t.file);
    }
  };
  if (view.kind === 'gradientFlow') {
    view.rows.forEach((r) => add(r.target));
    view.verdicts.forEach((v) => add(v.target));
  } else {
    view.rows.forEach((r) => add(r.target));
    add(view.failure?.target ?? null);
  }
  return files;
}

/** A message from a page, checked field by field; undefined for anything else. */
export function parseModelPageMessage(raw: unknown): ModelPageMessage | undefined {
  const m = obj(raw);
  switch (m.type) {
    case 'ready':
    case 'refresh':
      return { type: m.type };
    case 'openLocation':
      if (typeof m.file !== 'string' || m.file === '') {
        return undefined;
      }
      return {
        type: 'openLocation',
        file: m.file,
        line: typeof m.line === 'number' && Number.isInteger(m.line) && m.line >= 1 ? m.line : 1,
      };
    default:
      return undefined;
  }
}
