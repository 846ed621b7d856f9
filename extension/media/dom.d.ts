// Types of the webview scripts' globals, for `tsc -p tsconfig.media.json` (checkJs); not shipped code.

/** What a DOM helper accepts as children. */
export type Children = Node | string | null | undefined | false | Children[];

export interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): any;
  setState(state: unknown): void;
}

export interface TorchDoctorDom {
  h(tag: string, props?: Record<string, unknown> | null, children?: Children): HTMLElement;
  s(tag: string, props?: Record<string, unknown> | null, children?: Children): SVGElement;
  setProps(el: Element, props: Record<string, unknown> | null | undefined): void;
  append(el: Element, children: Children): void;
  textParts(parts: { text: string; code: boolean }[] | null | undefined): Node[];
  srOnly(text: string): HTMLElement;
  linkButton(label: string, onclick: (e: Event) => void, props?: Record<string, unknown>): HTMLElement;
  baseName(file: string): string;
}

declare global {
  function acquireVsCodeApi(): VsCodeApi;
  interface Window {
    TorchDoctorDom: TorchDoctorDom;
    /** The check-result chart (chart.js). */
    TorchDoctorChart: { drawChart(curve: any, width: number): SVGElement; seriesClass(sr: any, i: number): string };
    /** The model-view frame (modelViewPage.js) the gradient-flow and shape-trace pages draw into. */
    TorchDoctorPage: any;
  }
}
