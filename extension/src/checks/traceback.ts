/**
 * Where a check's error points: the frames of a Python traceback (which are the user's), the
 * position of a syntax error, the files a result page may open, and a class or member's line
 * in Python source. Pure logic.
 */
import type { CheckResult } from '../protocol';
import { baseName } from '../webview/format';
import type { ErrorView, FrameView, SymbolRef } from './checkResultTypes';

const FRAME_RE = /^\s*File "(.+)", line (\d+), in (.+)$/gm;

/** Whether a traceback frame is the user's code (not the stdlib, site-packages or Torch Doctor). */
export function isUserFrame(file: string): boolean {
  if (file.startsWith('<') || !(file.startsWith('/') || /^[A-Za-z]:[\\/]/.test(file))) {
    return false;
  }
  const f = file.replace(/\\/g, '/');
  return !/\/(site-packages|dist-packages)\/|\/lib\/python\d|\/torchdoctor\/(checks|runtime|server)\//.test(f);
}

/** The frames of a Python traceback, outermost first. */
export function parseTraceback(detail: string): FrameView[] {
  const frames: FrameView[] = [];
  for (const m of detail.matchAll(FRAME_RE)) {
    const file = m[1];
    const line = Number(m[2]);
    const func = m[3].trim();
    frames.push({ file, line, func, label: `${baseName(file)}:${line} in ${func}`, user: isUserFrame(file) });
  }
  return frames;
}

/** "… syntax error at line 3, column 23: …" → {line: 3, column: 23}. */
export function syntaxErrorPosition(message: string): { line: number; column: number | null } | null {
  const m = /\bline (\d+)(?:, column (\d+))?/.exec(message);
  return m ? { line: Number(m[1]), column: m[2] ? Number(m[2]) : null } : null;
}

export function errorLocation(result: CheckResult, frames: FrameView[]): ErrorView['location'] {
  const err = result.error;
  if (!err) {
    return null;
  }
  if (err.kind === 'syntax-error') {
    const pos = syntaxErrorPosition(err.message);
    if (pos) {
      return { file: result.file, line: pos.line, column: pos.column, label: `${baseName(result.file)}:${pos.line}` };
    }
  }
  const user = frames.filter((f) => f.user);
  const last = user[user.length - 1];
  return last ? { file: last.file, line: last.line, column: null, label: last.label } : null;
}

/** The files a page may ask to open for this result: its own, and those in its traceback. */
export function allowedFiles(result: CheckResult): Set<string> {
  const files = new Set<string>([result.file]);
  for (const f of parseTraceback(result.error?.detail ?? '')) {
    files.add(f.file);
  }
  return files;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The 0-based line of a class, or of a member in it (`self.fc1 = ...`, `fc1: nn.Linear = ...`,
 * `def backward(`), in Python source; the class line when the member is not found; null when
 * the class is not in the text. A qualname (Outer.Inner) is looked up by its last part.
 */
export function findSymbolLine(text: string, symbol: SymbolRef): number | null {
  const lines = text.split(/\r?\n/);
  const name = symbol.className.split('.').pop() ?? symbol.className;
  const classRe = new RegExp(`^(\\s*)class\\s+${escapeRegExp(name)}\\b`);
  let start = -1;
  let indent = 0;
  for (let i = 0; i < lines.length; i++) {
    const m = classRe.exec(lines[i]);
    if (m) {
      start = i;
      indent = m[1].length;
      break;
    }
  }
  if (start < 0) {
    return null;
  }
  if (!symbol.member) {
    return start;
  }
  const member = escapeRegExp(symbol.member);
  const memberRes = [
    new RegExp(`^\\s*self\\.${member}\\s*(:[^=]*)?=(?!=)`),
    new RegExp(`^\\s*(async\\s+)?def\\s+${member}\\s*\\(`),
    new RegExp(`^\\s*${member}\\s*(:[^=]*)?=(?!=)`),
  ];
  let best: { line: number; rank: number } | null = null;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() !== '' && !line.trim().startsWith('#') && line.length - line.trimStart().length <= indent) {
      break; // left the class body
    }
    const rank = memberRes.findIndex((re) => re.test(line));
    if (rank >= 0 && (!best || rank < best.rank)) {
      best = { line: i, rank };
    }
  }
  return best ? best.line : start;
}

