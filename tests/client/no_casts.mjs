// Refuses a type assertion in the client sources given as arguments, so that
// every type the client relies on comes from the generated chessd.d.ts: an
// `as` (but `as const`), an angle-bracket assertion, a non-null `!`, the
// type `any` written out, and the comments that switch the checker off
// (@ts-ignore, @ts-expect-error, @ts-nocheck). Read with TypeScript's own
// parser, so comments and strings never count. Exits 1 naming each one.
import { readFileSync } from 'node:fs';
import ts from 'typescript';

let found = 0;
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const report = (pos, what) => {
    const { line, character } = source.getLineAndCharacterOfPosition(pos);
    console.error(`${file}:${line + 1}:${character + 1}: ${what}: the client takes its types from openapi.yaml, never asserts one`);
    found++;
  };
  const visit = (node) => {
    if (ts.isAsExpression(node) && !(ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === 'const'))
      report(node.getStart(source), `a type assertion (${node.getText(source).slice(0, 60)})`);
    else if (ts.isTypeAssertionExpression(node)) report(node.getStart(source), 'a type assertion (<T>)');
    else if (ts.isNonNullExpression(node)) report(node.getStart(source), `a non-null assertion (${node.getText(source).slice(0, 60)})`);
    else if (node.kind === ts.SyntaxKind.AnyKeyword) report(node.getStart(source), 'the type any');
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (const m of text.matchAll(/@ts-(ignore|expect-error|nocheck)/g)) report(m.index, `@ts-${m[1]}`);
}
process.exit(found ? 1 : 0);
