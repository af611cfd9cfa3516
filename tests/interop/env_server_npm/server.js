#!/usr/bin/env node
// A stdio MCP server with one tool, `environment`, answering the variables it was started
// with as structured content: tests launch it through npx and check what reached it.
"use strict";
const readline = require("readline");

function send(message) {
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
}

const tool = {
  name: "environment",
  description: "The server's environment variables.",
  inputSchema: { type: "object", properties: {} },
};

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const request = JSON.parse(line);
  if (request.id === undefined) return; // notifications need no answer
  if (request.method === "initialize") {
    send({
      id: request.id,
      result: {
        protocolVersion: request.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "bothost-env-server", version: "0.1.0" },
      },
    });
  } else if (request.method === "tools/list") {
    send({ id: request.id, result: { tools: [tool] } });
  } else if (request.method === "tools/call") {
    const env = { ...process.env };
    send({
      id: request.id,
      result: { content: [{ type: "text", text: JSON.stringify(env) }], structuredContent: env },
    });
  } else {
    send({ id: request.id, error: { code: -32601, message: `unknown method ${request.method}` } });
  }
});
