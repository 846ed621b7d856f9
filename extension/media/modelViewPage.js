// @ts-check
// Torch Doctor: what the gradient-flow and shape-trace pages share. Plain JS, nothing remote.
// Loaded after media/dom.js (the DOM helpers); the page's own script (gradientFlow.js /
// shapeTrace.js) then calls TorchDoctorPage.start(renderData). Views arrive as
// {type: 'render', view} (built in extension/src/views/); every string goes in with
// textContent or setAttribute, never as HTML. The view and the page's UI state are kept with
// setState.
(function () {
  'use strict';

  const vscode = acquireVsCodeApi();
  const { h, s, srOnly, textParts, baseName, linkButton } = window.TorchDoctorDom;
  const saved = vscode.getState() || {};
  let current = saved.view || null;
  let ui = saved.ui || {};
  let renderData = null;
  let scrollTimer = null;

  // ---------------------------------------------------------------------------------------
  // Findings

  /** A severity glyph with its word for screen readers (never colour alone). */
  function toneIcon(tone, icon, label) {
    return h('span', { class: 'tone-icon tone-' + tone, title: label }, [
      h('span', { 'aria-hidden': 'true', text: icon }),
      srOnly(label + ': '),
    ]);
  }

  /** One finding: glyph, sentence, "Next step: ..." and an optional extra (a link, a note). */
  function flagLine(f, extra) {
    return h('div', { class: 'flag tone-' + f.tone, 'data-rule': f.rule || null }, [
      toneIcon(f.tone, f.icon, f.label),
      h('div', { class: 'flag-text' }, [
        h('span', { class: 'flag-sentence' }, textParts(f.sentence)),
        f.suggestion && f.suggestion.length
          ? h('span', { class: 'flag-suggestion' }, [/** @type {Node} */ (h('span', { class: 'next', text: 'Next step: ' }))].concat(textParts(f.suggestion)))
          : null,
        extra || null,
      ]),
    ]);
  }

  function openTarget(target) {
    if (target && typeof target.file === 'string') {
      vscode.postMessage({ type: 'openLocation', file: target.file, line: target.line });
    }
  }

  // ---------------------------------------------------------------------------------------
  // Rows: one tab stop for the whole list; arrows move, Enter/Space opens.

  /**
   * Make `rows` (elements with data-target when they open something) keyboard-usable with a
   * roving tabindex inside `container`. Focus stays on the row of the same key across redraws.
   */
  function rovingRows(container, rows, activate) {
    if (!rows.length) {
      return;
    }
    let active = rows.findIndex((r) => r.dataset.key === ui.focusKey && !r.hidden);
    if (active < 0) {
      active = Math.max(0, rows.findIndex((r) => !r.hidden));
    }
    rows.forEach((r, i) => r.setAttribute('tabindex', i === active ? '0' : '-1'));
    const move = (to) => {
      const visible = rows.filter((r) => !r.hidden);
      if (!visible.length) {
        return;
      }
      const target = visible[Math.max(0, Math.min(visible.length - 1, to(visible)))];
      rows.forEach((r) => r.setAttribute('tabindex', r === target ? '0' : '-1'));
      target.focus();
      target.scrollIntoView({ block: 'nearest' });
    };
    container.addEventListener('keydown', (e) => {
      const row = e.target.closest && e.target.closest('[data-key]');
      if (!row || rows.indexOf(row) < 0) {
        return;
      }
      const here = (visible) => visible.indexOf(row);
      const page = Math.max(1, Math.floor(window.innerHeight / Math.max(row.offsetHeight, 1)) - 1);
      switch (e.key) {
        case 'ArrowDown':
          move((v) => here(v) + 1);
          break;
        case 'ArrowUp':
          move((v) => here(v) - 1);
          break;
        case 'PageDown':
          move((v) => here(v) + page);
          break;
        case 'PageUp':
          move((v) => here(v) - page);
          break;
        case 'Home':
          move(() => 0);
          break;
        case 'End':
          move((v) => v.length - 1);
          break;
        case 'Enter':
        case ' ':
          activate(row);
          break;
        default:
          return;
      }
      e.preventDefault();
    });
    container.addEventListener('focusin', (e) => {
      const row = e.target.closest && e.target.closest('[data-key]');
      if (row && rows.indexOf(row) >= 0) {
        rows.forEach((r) => r.setAttribute('tabindex', r === row ? '0' : '-1'));
        setUi({ focusKey: row.dataset.key });
      }
    });
    container.addEventListener('click', (e) => {
      const row = e.target.closest && e.target.closest('[data-key]');
      if (row && rows.indexOf(row) >= 0 && !e.target.closest('button, a, input, summary')) {
        activate(row);
      }
    });
  }

  // ---------------------------------------------------------------------------------------
  // Frame: header, banner, message pages

  function header(view) {
    return h('header', { class: 'header' }, [
      h('div', { class: 'title-row' }, [
        h('h1', { text: view.title }),
        h('button', {
          type: 'button',
          class: 'btn',
          id: 'refresh',
          text: 'Refresh',
          title: 'Take a new snapshot of the paused program',
          onclick: () => vscode.postMessage({ type: 'refresh' }),
        }),
      ]),
      view.subtitle ? h('div', { class: 'subtitle', id: 'subtitle', text: view.subtitle }) : null,
    ]);
  }

  const BANNER_ICONS = { stale: '■', running: '▶', refreshing: '↻' };

  function banner(b) {
    if (!b) {
      return null;
    }
    return h('div', { class: 'banner banner-' + b.state, id: 'banner', role: 'status' }, [
      h('span', { class: 'banner-icon', 'aria-hidden': 'true', text: BANNER_ICONS[b.state] || 'ℹ' }),
      h('span', { text: b.text }),
    ]);
  }

  const STATE_ICONS = {
    loading: '',
    'no-session': '○',
    'not-paused': '▶',
    'no-model': '○',
    'no-runtime': '⚠',
    backend: '⚠',
    empty: '○',
    error: '✖',
  };

  function messageBody(view) {
    const icon = STATE_ICONS[view.state];
    const children = [
      h('p', { class: 'message-headline', id: 'message-headline' }, [
        view.state === 'loading'
          ? h('span', { class: 'spinner', 'aria-hidden': 'true' })
          : h('span', { class: 'message-icon', 'aria-hidden': 'true', text: icon }),
        h('span', { text: view.headline }),
      ]),
    ];
    if (view.text) {
      children.push(h('p', { class: 'message-text', text: view.text }));
    }
    if (view.detail) {
      children.push(
        h('details', { class: 'message-detail' }, [
          h('summary', { text: 'Details' }),
          h('pre', {}, h('code', { text: view.detail })),
        ]),
      );
    }
    return h(
      'section',
      { class: 'message message-' + view.state, id: 'message', 'data-state': view.state, role: view.state === 'error' ? 'alert' : 'status' },
      children,
    );
  }

  function render(view) {
    const app = document.getElementById('app');
    app.replaceChildren();
    if (!view || !view.kind) {
      document.body.dataset.state = 'empty';
      app.appendChild(h('p', { class: 'message-text', text: 'Waiting for the debugger…' }));
      return;
    }
    document.body.dataset.state = view.kind === 'message' ? view.state : 'data';
    document.body.dataset.banner = view.banner ? view.banner.state : '';
    app.appendChild(header(view));
    if (view.kind === 'message') {
      app.appendChild(messageBody(view));
      return;
    }
    const b = banner(view.banner);
    if (b) {
      app.appendChild(b);
    }
    if (renderData) {
      renderData(view, app);
    }
  }

  /** Draw the current view again; the row (or control) that had the focus gets it back. */
  function rerender() {
    const active = /** @type {HTMLElement | null} */ (document.activeElement);
    const key = active && active.dataset ? active.dataset.key : undefined;
    const id = active && active !== document.body ? active.id : '';
    render(current);
    /** @type {HTMLElement | null} */
    let again = null;
    if (key !== undefined) {
      const rows = /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[data-key]'));
      again = Array.from(rows).find((el) => el.dataset.key === key) || null;
    } else if (id) {
      again = document.getElementById(id);
    }
    if (again) {
      again.focus({ preventScroll: true });
    }
  }

  function setUi(patch) {
    ui = Object.assign({}, ui, patch);
    vscode.setState({ view: current, ui: ui });
  }

  function start(fn) {
    renderData = fn;
    window.addEventListener('message', (event) => {
      const msg = event.data;
      if (msg && msg.type === 'render' && msg.view && typeof msg.view === 'object') {
        const sameData = current && current.kind !== 'message' && msg.view.kind === current.kind;
        current = msg.view;
        vscode.setState({ view: current, ui: ui });
        const y = window.scrollY;
        rerender();
        if (sameData) {
          window.scrollTo(0, y); // a refresh of the same view keeps the reader's place
        }
      }
    });
    window.addEventListener('scroll', () => {
      clearTimeout(scrollTimer);
      scrollTimer = setTimeout(() => setUi({ scrollY: window.scrollY }), 150);
    });
    render(current);
    if (current && ui.scrollY) {
      window.scrollTo(0, ui.scrollY);
    }
    vscode.postMessage({ type: 'ready' });
  }

  window.TorchDoctorPage = {
    h: h,
    s: s,
    srOnly: srOnly,
    toneIcon: toneIcon,
    textParts: textParts,
    flagLine: flagLine,
    openTarget: openTarget,
    baseName: baseName,
    linkButton: linkButton,
    rovingRows: rovingRows,
    ui: () => ui,
    setUi: setUi,
    rerender: rerender,
    start: start,
  };
})();
