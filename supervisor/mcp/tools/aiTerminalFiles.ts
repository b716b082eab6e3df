/**
 * The file side of `ai_terminal_*`, confined to the session's sandbox (aiTerminalSandbox.ts):
 * read_file (paged text, secrets redacted; binary and >10 MB refused), write_file and edit_file
 * (the user confirms first; atomic through a temporary file and a rename), list_files (a glob) and
 * search_files (a regex over the files git would show, on the work pool).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import { Type } from 'typebox';

import { redactSecrets } from '../../../shared/redactor.js';
import { searchRegExp, type SearchQuery } from '../../pool/poolTasks.js';
import { confirmOrRefuse, sessionFor, sessionIdArg, type AiTerminalDeps } from './aiTerminalGuard.js';
import { globRegExp, SessionSandbox } from './aiTerminalSandbox.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { CallerContext, NativeTool } from './nativeTool.js';

const AiTerminalFileConstants = {
  MAX_FILE_BYTES: 10 * 1024 * 1024,
  READ_DEFAULT_LINES: 200,
  READ_MAX_LINES: 2000,
  LIST_MAX: 500,
  SEARCH_MAX: 50,
  CONTEXT_DEFAULT: 2,
  CONTEXT_MAX: 10,
  /** Git's own rule for "binary": a NUL in the first 8000 bytes. */
  BINARY_PROBE_BYTES: 8000,
} as const;

const pathArg = (key: string, description: string) => Type.String({ minLength: 1, description, errorMessage: `'${key}' must be a non-empty string` });

/** A text file's content, or why it is not one tools should read. */
async function readText(full: string, key: string): Promise<string> {
  const st = await stat(full).catch(() => null);
  if (!st) throw new ToolError('not_found', `'${key}' does not exist`, { field: key });
  if (!st.isFile()) throw new ToolError('invalid_input', `'${key}' is not a regular file`, { field: key });
  if (st.size > AiTerminalFileConstants.MAX_FILE_BYTES)
    throw new ToolError('payload_too_large', `'${key}' is ${st.size} bytes; files over ${AiTerminalFileConstants.MAX_FILE_BYTES} bytes are not read`, {
      field: key,
    });
  const bytes = await readFile(full);
  if (bytes.subarray(0, AiTerminalFileConstants.BINARY_PROBE_BYTES).includes(0))
    throw new ToolError('invalid_input', `'${key}' is a binary file`, { field: key });
  return bytes.toString('utf8');
}

/** Replaces a file's content at once: a reader sees the old file or the new one, never half of it. */
async function writeAtomic(full: string, content: string): Promise<void> {
  await mkdir(dirname(full), { recursive: true });
  const tmp = join(dirname(full), `.${basename(full)}.${randomUUID()}.tmp`);
  try {
    // Keep an existing file's mode (an executable script stays executable).
    const mode = (await stat(full).catch(() => null))?.mode;
    await writeFile(tmp, content, mode === undefined ? {} : { mode: mode & 0o7777 });
    await rename(tmp, full);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

function contentSize(content: string): void {
  if (Buffer.byteLength(content) > AiTerminalFileConstants.MAX_FILE_BYTES)
    throw new ToolError('payload_too_large', `'content' is over ${AiTerminalFileConstants.MAX_FILE_BYTES} bytes`, { field: 'content' });
}

function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** The sandboxed session a file tool addresses. */
async function sandboxFor(deps: AiTerminalDeps, args: Record<string, unknown>): Promise<{ sandbox: SessionSandbox; record: ReturnType<typeof sessionFor> }> {
  const record = sessionFor(deps.sessions, args['session_id'] as string);
  return { record, sandbox: await SessionSandbox.of(record) };
}

/** The sandbox's files under `path` (default the root) whose path below it matches `glob`. */
async function filesUnder(deps: AiTerminalDeps, sandbox: SessionSandbox, path: string | undefined, glob: string | undefined): Promise<string[]> {
  const base = path === undefined ? '' : sandbox.relative(sandbox.resolve(path, 'path'));
  const re = glob === undefined ? null : globRegExp(glob);
  const prefix = base === '' ? '' : `${base}/`;
  const out: string[] = [];
  for (const file of await sandbox.files(deps.pool)) {
    if (prefix !== '' && !file.startsWith(prefix)) continue;
    if (re !== null && !re.test(file.slice(prefix.length))) continue;
    out.push(file);
  }
  return out;
}

export function createFileTools(deps: AiTerminalDeps): NativeTool[] {
  const editFile = async (args: Record<string, unknown>, caller: CallerContext) => {
    const { record, sandbox } = await sandboxFor(deps, args);
    const full = sandbox.resolve(args['file_path'] as string, 'file_path', { write: true });
    const oldString = args['old_string'] as string;
    const newString = args['new_string'] as string;
    const all = args['replace_all'] === true;
    const plan = (text: string): number => {
      const count = occurrences(text, oldString);
      if (count === 0) throw new ToolError('not_found', "'old_string' does not occur in the file", { field: 'old_string' });
      if (count > 1 && !all)
        throw new ToolError('conflict', `'old_string' occurs ${count} times; give more context to make it unique, or set replace_all`, {
          field: 'old_string',
          occurrences: count,
        });
      return count;
    };
    const before = await readText(full, 'file_path');
    const count = plan(before);
    await confirmOrRefuse(
      deps,
      caller,
      'ai_terminal_edit_file',
      record,
      `Edit ${sandbox.relative(full)}: replace ${all ? `${count} occurrence(s)` : 'one occurrence'} of\n${oldString}\nwith\n${newString}`,
    );
    // The confirm can take minutes: the path must still lead inside the sandbox (a directory on it may
    // have become a symlink meanwhile), and the edit applies to the file as it is now, or not at all.
    sandbox.resolve(args['file_path'] as string, 'file_path', { write: true });
    const now = await readText(full, 'file_path');
    if (now !== before) throw new ToolError('conflict', 'the file changed while the edit waited for confirmation; nothing was written');
    const after = all ? now.split(oldString).join(newString) : now.replace(oldString, () => newString);
    contentSize(after);
    await writeAtomic(full, after);
    return { ok: true, file_path: sandbox.relative(full), replacements: count };
  };

  return [
    defineTool({
      name: 'ai_terminal_read_file',
      summary: `Read a text file in the session's sandbox (its repository), paged by lines, secrets redacted. Binary files and files over 10 MB are refused. → {file_path, content, offset, lines, total_lines, next_offset?}.`,
      properties: {
        session_id: sessionIdArg,
        file_path: pathArg('file_path', "Relative to the session's sandbox root, or absolute inside it"),
        offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Lines to skip (default 0)', errorMessage: "'offset' must be an integer >= 0" })),
        limit: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: AiTerminalFileConstants.READ_MAX_LINES,
            description: `Lines to return (default ${AiTerminalFileConstants.READ_DEFAULT_LINES}, at most ${AiTerminalFileConstants.READ_MAX_LINES})`,
            errorMessage: `'limit' must be an integer between 1 and ${AiTerminalFileConstants.READ_MAX_LINES}`,
          }),
        ),
      },
      required: ['session_id', 'file_path'],
      handler: async (args) => {
        const { sandbox } = await sandboxFor(deps, args);
        const full = sandbox.resolve(args['file_path'] as string, 'file_path');
        const lines = (await readText(full, 'file_path')).split('\n');
        if (lines.at(-1) === '') lines.pop();
        const offset = (args['offset'] as number | undefined) ?? 0;
        const limit = (args['limit'] as number | undefined) ?? AiTerminalFileConstants.READ_DEFAULT_LINES;
        const page = lines.slice(offset, offset + limit);
        const out: Record<string, unknown> = {
          file_path: sandbox.relative(full),
          content: redactSecrets(page.join('\n')),
          offset,
          lines: page.length,
          total_lines: lines.length,
        };
        if (offset + limit < lines.length) out['next_offset'] = offset + limit;
        return out;
      },
    }),
    defineTool({
      name: 'ai_terminal_write_file',
      summary:
        "Create or overwrite a text file in the session's sandbox (parent directories made). Always asks the user first. Atomic (temporary file, then rename). → {ok, file_path, bytes}.",
      properties: {
        session_id: sessionIdArg,
        file_path: pathArg('file_path', "Relative to the session's sandbox root, or absolute inside it"),
        content: Type.String({ description: 'The whole new content', errorMessage: "'content' must be a string" }),
      },
      required: ['session_id', 'file_path', 'content'],
      handler: async (args, caller) => {
        const { record, sandbox } = await sandboxFor(deps, args);
        const full = sandbox.resolve(args['file_path'] as string, 'file_path', { write: true });
        const content = args['content'] as string;
        contentSize(content);
        if ((await stat(full).catch(() => null))?.isDirectory()) throw new ToolError('invalid_input', "'file_path' is a directory", { field: 'file_path' });
        await confirmOrRefuse(deps, caller, 'ai_terminal_write_file', record, `Write ${Buffer.byteLength(content)} bytes to ${sandbox.relative(full)}`);
        // Checked again after the wait: the path may lead elsewhere by now.
        sandbox.resolve(args['file_path'] as string, 'file_path', { write: true });
        await writeAtomic(full, content);
        return { ok: true, file_path: sandbox.relative(full), bytes: Buffer.byteLength(content) };
      },
    }),
    defineTool({
      name: 'ai_terminal_edit_file',
      summary:
        "Replace text in a file in the session's sandbox: old_string must occur exactly once unless replace_all. Always asks the user first; atomic. → {ok, file_path, replacements}.",
      properties: {
        session_id: sessionIdArg,
        file_path: pathArg('file_path', "Relative to the session's sandbox root, or absolute inside it"),
        old_string: Type.String({ minLength: 1, description: 'The exact text to replace', errorMessage: "'old_string' must be a non-empty string" }),
        new_string: Type.String({ description: 'What replaces it', errorMessage: "'new_string' must be a string" }),
        replace_all: Type.Optional(Type.Boolean({ description: 'Replace every occurrence (default false)', errorMessage: "'replace_all' must be a boolean" })),
      },
      required: ['session_id', 'file_path', 'old_string', 'new_string'],
      handler: editFile,
    }),
    defineTool({
      name: 'ai_terminal_list_files',
      summary: `List files in the session's sandbox matching a glob (** any depth, * and ? within a name, {a,b}; a pattern without / matches names at any depth). A repository lists what git shows (.gitignore honoured). At most ${AiTerminalFileConstants.LIST_MAX}. → {files, total, truncated}.`,
      properties: {
        session_id: sessionIdArg,
        pattern: pathArg('pattern', 'A glob, e.g. **/*.ts or *.md'),
        path: Type.Optional(pathArg('path', 'A directory to list under (default the sandbox root)')),
      },
      required: ['session_id', 'pattern'],
      handler: async (args) => {
        const { sandbox } = await sandboxFor(deps, args);
        const files = await filesUnder(deps, sandbox, args['path'] as string | undefined, args['pattern'] as string);
        return { files: files.slice(0, AiTerminalFileConstants.LIST_MAX), total: files.length, truncated: files.length > AiTerminalFileConstants.LIST_MAX };
      },
    }),
    defineTool({
      name: 'ai_terminal_search_files',
      summary: `Search the files of the session's sandbox for a regular expression (a repository's .gitignore honoured; binary files skipped), at most ${AiTerminalFileConstants.SEARCH_MAX} matches with context lines. → {matches: [{path, line, text, before, after}], files_searched, truncated}.`,
      properties: {
        session_id: sessionIdArg,
        pattern: Type.String({ minLength: 1, description: 'A JavaScript regular expression', errorMessage: "'pattern' must be a non-empty string" }),
        path: Type.Optional(pathArg('path', 'A directory to search under (default the sandbox root)')),
        glob: Type.Optional(pathArg('glob', 'Only files matching this glob')),
        context_lines: Type.Optional(
          Type.Integer({
            minimum: 0,
            maximum: AiTerminalFileConstants.CONTEXT_MAX,
            description: `Lines before and after each match (default ${AiTerminalFileConstants.CONTEXT_DEFAULT})`,
            errorMessage: `'context_lines' must be an integer between 0 and ${AiTerminalFileConstants.CONTEXT_MAX}`,
          }),
        ),
      },
      required: ['session_id', 'pattern'],
      handler: async (args) => {
        const q: SearchQuery = { query: args['pattern'] as string, useRegex: true, caseSensitive: true, wholeWord: false };
        try {
          searchRegExp(q);
        } catch (err) {
          throw new ToolError('invalid_input', `'pattern' is not a valid regular expression: ${(err as Error).message}`, { field: 'pattern' });
        }
        const { sandbox } = await sandboxFor(deps, args);
        const files = await filesUnder(deps, sandbox, args['path'] as string | undefined, args['glob'] as string | undefined);
        const context = (args['context_lines'] as number | undefined) ?? AiTerminalFileConstants.CONTEXT_DEFAULT;
        // The context lines come with the matches, from the read the pool searched: no file is read again here.
        const found = await deps.pool.searchIn(sandbox.root, files, q, AiTerminalFileConstants.SEARCH_MAX, context);
        const matches = found.matches.map((m) => ({
          path: m.path,
          line: m.line_number,
          text: redactSecrets(m.line_text),
          before: (m.before ?? []).map(redactSecrets),
          after: (m.after ?? []).map(redactSecrets),
        }));
        return { matches, files_searched: files.length, truncated: found.truncated };
      },
    }),
  ];
}
