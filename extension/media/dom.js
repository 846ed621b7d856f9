// @ts-check
// Torch Doctor: the DOM helpers every page uses (check results, gradient flow, shape trace).
// Loaded first, with the page's CSP nonce (extension/src/webview/html.ts); the page scripts read
// them from window.TorchDoctorDom. Every string goes in with textContent or setAttribute,
// never as HTML.
(function () {
  'use strict';

  const SVG_NS = 'http://www.w3.org/2000/svg';

  /**
   * Props: class, text, on<event> (a function), anything else an attribute; null, undefined
   * and false are left out, true is an empty attribute.
   * @param {Element} el
   * @param {Record<string, unknown> | null | undefined} props
   */
  function setProps(el, props) {
    if (!props) {
      return;
    }
    for (const key of Object.keys(props)) {
      const v = props[key];
      if (v === null || v === undefined || v === false) {
        continue;
      }
      if (key === 'class') {
        el.setAttribute('class', String(v));
      } else if (key === 'text') {
        el.textContent = String(v);
      } else if (key.startsWith('on') && typeof v === 'function') {
        el.addEventListener(key.slice(2), /** @type {EventListener} */ (v));
      } else {
        el.setAttribute(key, v === true ? '' : String(v));
      }
    }
  }

  /**
   * Children: a node, a string (a text node), an array of them; null, undefined and false are
   * left out.
   * @param {Element} el
   * @param {import('./dom').Children} children
   */
  function append(el, children) {
    if (children === null || children === undefined || children === false) {
      return;
    }
    if (Array.isArray(children)) {
      for (const c of children) {
        append(el, c);
      }
    } else if (typeof children === 'string') {
      el.appendChild(document.createTextNode(children));
    } else {
      el.appendChild(children);
    }
  }

  /**
   * An HTML element.
   * @param {string} tag
   * @param {Record<string, unknown> | null} [props]
   * @param {import('./dom').Children} [children]
   * @returns {HTMLElement}
   */
  function h(tag, props, children) {
    const el = document.createElement(tag);
    setProps(el, props);
    append(el, children);
    return el;
  }

  /**
   * An SVG element.
   * @param {string} tag
   * @param {Record<string, unknown> | null} [props]
   * @param {import('./dom').Children} [children]
   * @returns {SVGElement}
   */
  function s(tag, props, children) {
    const el = /** @type {SVGElement} */ (document.createElementNS(SVG_NS, tag));
    setProps(el, props);
    append(el, children);
    return el;
  }

  /**
   * Prose with `code` parts (TextPart[] of extension/src/webview/format.ts).
   * @param {{ text: string, code: boolean }[] | null | undefined} parts
   * @returns {Node[]}
   */
  function textParts(parts) {
    return (parts || []).map((p) => (p.code ? h('code', { text: p.text }) : document.createTextNode(p.text)));
  }

  /**
   * A text for screen readers only.
   * @param {string} text
   */
  function srOnly(text) {
    return h('span', { class: 'sr-only', text: text });
  }

  /**
   * A button styled as a link.
   * @param {string} label
   * @param {(e: Event) => void} onclick
   * @param {Record<string, unknown>} [props]
   */
  function linkButton(label, onclick, props) {
    return h('button', Object.assign({ type: 'button', class: 'link', text: label, onclick: onclick }, props || {}));
  }

  /**
   * The last part of a path.
   * @param {string} file
   */
  function baseName(file) {
    const parts = String(file).split(/[\\/]/);
    return parts[parts.length - 1] || file;
  }

  window.TorchDoctorDom = { h, s, setProps, append, textParts, srOnly, linkButton, baseName };
})();
