/**
 * The Model Context Protocol server of `vidembed mcp` (issue 34), on the official TypeScript SDK:
 * the tools of ./tools.ts over a transport (stdio for `vidembed mcp`). A tool's failure is a tool
 * result with `isError` (so the assistant reads why: a schema's issues with their fields, a video
 * not found), never a broken session; an unknown tool is a protocol error.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ValidationError, VidembedError } from '../../api/errors.js';
import { describeError } from '../errors.js';
import { TOOLS, type ToolContext } from './tools.js';

export const MCP_INSTRUCTIONS =
  'vidembed searches a library of videos by what is seen, read (on-screen text) and said. Start with list_collections, then search (text, said, a picture) in a collection; results name the video, the moment (start/end seconds) and how sure the match is. get_transcript reads what is said in a video; find_similar finds moments that look like one; export_clip turns moments into an EDL (or one into an MP4 file).';

/** A tool's failure as the assistant reads it: the issues of a 422 field by field, else the error's one line. */
function failure(err: unknown) {
  const code = err instanceof VidembedError ? err.code : 'internal_error';
  const detail =
    err instanceof ValidationError ? err.issues.map((i) => ({ ...i, loc: i.loc.filter((l, n) => !(n === 0 && (l === 'body' || l === 'query' || l === 'path'))) })) : describeError(err);
  const text = err instanceof ValidationError ? `invalid input: ${describeError(err)}` : describeError(err);
  return { isError: true, content: [{ type: 'text' as const, text }], structuredContent: { code, detail } };
}

export function createMcpServer(ctx: ToolContext, version: string): Server {
  const server = new Server({ name: 'vidembed', title: 'vidembed', version }, { capabilities: { tools: {} }, instructions: MCP_INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object'; properties?: Record<string, object> },
      annotations: { title: t.title, readOnlyHint: t.readOnly, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `no tool named ${request.params.name}; tools: ${TOOLS.map((t) => t.name).join(', ')}`);
    try {
      const out = await tool.run(ctx, request.params.arguments ?? {});
      return { content: [{ type: 'text' as const, text: out.text }], structuredContent: out.structured };
    } catch (err) {
      return failure(err);
    }
  });
  return server;
}

/** Serves until the transport closes (the client went away, stdin ended). */
export async function serveMcp(ctx: ToolContext, transport: Transport, version: string): Promise<void> {
  const server = createMcpServer(ctx, version);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  await closed;
}
