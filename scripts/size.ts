/**
 * `npm run size`: how big the product is. Lines and code lines (neither blank nor only comment)
 * of the TypeScript under nodes/ and credentials/, and Send Text's closure: every product file
 * its operation file reaches through value imports, with their lines.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import ts from 'typescript';

import { ROOT, SEND_TEXT, filesUnder, sendTextClosure } from '../test/harness/importGraph';

/** Lines, and lines holding at least one token that is not a comment. */
function countLines(text: string): { lines: number; code: number } {
	const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, true);
	const codeLines = new Set<number>();
	const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
	const visit = (node: ts.Node) => {
		if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode)
			return;
		const children = node.getChildren(source);
		if (children.length === 0 && node.kind !== ts.SyntaxKind.EndOfFileToken) {
			for (let line = lineOf(node.getStart(source)); line <= lineOf(node.getEnd()); line++)
				codeLines.add(line);
		}
		children.forEach(visit);
	};
	visit(source);
	const lines = source.getLineStarts().length - (text.endsWith('\n') ? 1 : 0);
	return { lines, code: codeLines.size };
}

function measure(files: string[]): { files: number; lines: number; code: number } {
	let lines = 0;
	let code = 0;
	for (const file of files) {
		const counted = countLines(readFileSync(join(ROOT, file), 'utf8'));
		lines += counted.lines;
		code += counted.code;
	}
	return { files: files.length, lines, code };
}

if (require.main === module) {
	const product = [...filesUnder('nodes'), ...filesUnder('credentials')].filter((file) =>
		file.endsWith('.ts'),
	);
	const all = measure(product);
	const sendText = measure(
		[...sendTextClosure()].filter(
			(file) => file.startsWith('nodes/') || file.startsWith('credentials/'),
		),
	);
	console.log(
		`product (nodes/, credentials/): ${all.files} files, ${all.lines} lines, ${all.code} code lines`,
	);
	console.log(
		`Send Text's closure (${SEND_TEXT} and the run it is given): ${sendText.files} files, ${sendText.lines} lines`,
	);
}
