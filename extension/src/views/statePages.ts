/**
 * The model views' pages without data (loading, no session, not paused, no model, no runtime,
 * backend not ready, nothing for this view, an error), the banners over data that may be out
 * of date, and the subtitle that says which stop the data is from. Pure logic.
 */
import { obj, str } from './payload';
import type { Banner, MessagePage, MessageState, ModelPageView, ViewKind } from './viewTypes';
import { VIEW_TITLES } from './viewTypes';

export const STATE_TEXT: Record<MessageState, { headline: string; text: string }> = {
  loading: { headline: 'Taking a snapshot of the model…', text: '' },
  'no-session': {
    headline: 'No debug session.',
    text:
      'Start your training script with a Torch Doctor launch configuration and pause it after a forward pass ' +
      '(and a backward, for the gradients): this view fills in at every stop.',
  },
  'not-paused': {
    headline: 'The program is not paused.',
    text: 'The view refreshes when it stops at a breakpoint, an exception or a pause.',
  },
  'no-model': {
    headline: 'No model has run a forward pass yet.',
    text: 'Step past the first forward (and a backward, for the gradients); the view refreshes at the next stop.',
  },
  'no-runtime': {
    headline: 'The Torch Doctor runtime is not loaded in this session.',
    text: 'Start it with a torchdoctor launch configuration ("type": "torchdoctor" in launch.json).',
  },
  backend: {
    headline: 'The Torch Doctor backend is not ready.',
    text: 'It diagnoses the snapshot. The status bar item says what it is doing; once it is ready, press Refresh.',
  },
  empty: { headline: '', text: '' },
  error: { headline: 'The snapshot could not be shown.', text: '' },
};

export const EMPTY_TEXT: Record<ViewKind, { headline: string; text: string }> = {
  gradientFlow: {
    headline: 'No gradients yet.',
    text: 'The model has not run a backward pass since it was created (or no parameter requires a gradient). Step past loss.backward(); the view refreshes at the next stop.',
  },
  shapeTrace: {
    headline: 'No module calls recorded.',
    text: 'The model has not run a forward pass yet. Step past the first forward; the view refreshes at the next stop.',
  },
};

/**
 * A page with no data: loading, no session, not paused, no model, no runtime, backend not
 * ready, nothing for this view, or an error (text = the message; detail = the traceback).
 */
export function messagePage(view: ViewKind, state: MessageState, subtitle: string, text = '', detail = ''): MessagePage {
  const base = state === 'empty' ? EMPTY_TEXT[view] : STATE_TEXT[state];
  let headline = base.headline;
  let body = base.text;
  if (state === 'error') {
    headline = text || base.headline;
    body = '';
  } else if (text) {
    // A more specific sentence (the backend's summary, the snapshot module's own words).
    body = text === headline ? base.text : text;
  }
  return {
    kind: 'message',
    view,
    title: VIEW_TITLES[view],
    subtitle,
    state,
    headline,
    text: body,
    detail: detail && detail !== headline ? detail : '',
    canRefresh: state !== 'loading',
  };
}

/** The data page with a banner on it (or off it), or the page as it is for a message. */
export function withBanner(view: ModelPageView, banner: Banner | null): ModelPageView {
  return view.kind === 'message' ? view : { ...view, banner };
}

export const BANNERS = {
  stale: { state: 'stale', text: 'The debug session ended; the last data is shown.' },
  running: {
    state: 'running',
    text: 'The program is running; this is the data from the last stop. The view refreshes at the next one.',
  },
  refreshing: { state: 'refreshing', text: 'Updating…' },
} as const satisfies Record<string, Banner>;

/** "“Train CNN” · TinyCNN, forward 3 · paused (breakpoint) at 14:03:12". */
export function stopSubtitle(sessionName: string, reason: string | null, at: Date, facts = ''): string {
  const hh = String(at.getHours()).padStart(2, '0');
  const mm = String(at.getMinutes()).padStart(2, '0');
  const ss = String(at.getSeconds()).padStart(2, '0');
  const why = reason ? ` (${reason})` : '';
  return [`“${sessionName}”`, facts, `paused${why} at ${hh}:${mm}:${ss}`].filter(Boolean).join(' · ');
}

/**
 * Which model and forward a snapshot shows ("TinyCNN, forward 3"; "TinyCNN, forward 3, the
 * encoder"), from the runtime's envelope (torchdoctor/runtime/snapshot.py); "" when unknown.
 */
export function snapshotFacts(snapshot: unknown): string {
  const model = obj(obj(snapshot).model);
  const type = str(model.type);
  if (!type) {
    return '';
  }
  const parts = [type];
  if (typeof model.passNumber === 'number') {
    parts.push(`forward ${model.passNumber}`);
  }
  if (str(model.focus)) {
    parts.push(`picked: ${str(model.focus)}`);
  }
  return parts.join(', ');
}
