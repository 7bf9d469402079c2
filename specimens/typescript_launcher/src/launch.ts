// An agent runner in TypeScript that tokenizes the model's command line with shell-quote
// and spawns it without a shell: pipes, redirects and globs become plain words.
import { spawn } from "node:child_process";
import { parse } from "shell-quote";
import OpenAI from "openai";

const client = new OpenAI();

function tokenize(commandLine: string): string[] {
  return parse(commandLine).filter((entry): entry is string => typeof entry === "string");
}

export async function runTurn(task: string): Promise<number> {
  const completion = await client.chat.completions.create({
    model: "gpt-4o",
    messages: [{ role: "user", content: task }],
    tools: [{ type: "function", function: { name: "run", parameters: { type: "object" } } }],
  });
  const call = completion.choices[0].message.tool_calls?.[0];
  if (!call) return 0;
  const { command } = JSON.parse(call.function.arguments) as { command: string };
  const argv = tokenize(command);
  const child = spawn(argv[0], argv.slice(1), { stdio: "inherit" });
  return await new Promise((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
}
