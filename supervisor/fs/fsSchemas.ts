/** The answers of the /fs routes, one schema each. */
import { Type } from 'typebox';

export const FsEntrySchema = Type.Object({
  name: Type.String(),
  path: Type.String({ description: 'Relative to the repository.' }),
  is_dir: Type.Boolean(),
  size: Type.Integer({ minimum: 0 }),
  modified_at: Type.Union([Type.Integer({ description: 'Unix milliseconds.' }), Type.Null()]),
  is_ignored: Type.Boolean({ description: 'Ignored by git (.gitignore and the like).' }),
});

export const ContentMatchSchema = Type.Object({
  path: Type.String(),
  line_number: Type.Integer({ minimum: 1 }),
  line_text: Type.String({ description: 'The line, cut at 1000 characters.' }),
  match_start: Type.Integer({ minimum: 0, description: 'UTF-16 offset into line_text.' }),
  match_end: Type.Integer({ minimum: 0, description: 'UTF-16 offset into line_text, exclusive.' }),
});

export const ContentSearchSchema = Type.Object({
  matches: Type.Array(ContentMatchSchema),
  files_searched: Type.Integer({ minimum: 0 }),
  bytes_searched: Type.Integer({ minimum: 0 }),
  truncated: Type.Boolean({ description: 'More matches than `limit` were found.' }),
});

export const FileContentSchema = Type.Object({ content: Type.String({ description: 'The file as UTF-8 text.' }), size: Type.Integer({ minimum: 0 }) });

export const StatSchema = Type.Object({
  exists: Type.Boolean(),
  is_dir: Type.Boolean(),
  size: Type.Integer({ minimum: 0 }),
  modified_at: Type.Union([Type.Integer({ description: 'Unix milliseconds.' }), Type.Null()]),
});

export const TerminalPathSchema = Type.Object({
  absolute_path: Type.String(),
  is_directory: Type.Boolean(),
  line: Type.Optional(Type.Integer()),
  col: Type.Optional(Type.Integer()),
});

export const TransferSchema = Type.Object({
  transferred: Type.Array(Type.String({ description: 'Where each moved or copied path landed.' })),
  errors: Type.Array(Type.Object({ path: Type.String(), error: Type.String() })),
});

export const GitignoreSchema = Type.Object({ ok: Type.Literal(true), added: Type.Boolean({ description: 'false when the pattern was there already.' }) });
