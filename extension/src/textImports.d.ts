// esbuild imports these as text (extension/esbuild.mjs: loader '.py': 'text').
declare module '*.py' {
  const text: string;
  export default text;
}
