// A finished OpenClaw turn (the transcript entries from the user's message through the final
// answer) as MetaClaw records it: the user's words, the answer, the tools the agent ran.

type Block = { type?: string; text?: string; name?: string };
type Message = { role?: string; content?: string | Block[] };

/** The text parts of a message's content. */
export function textOf(content: Message["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b && b.type === "text" && typeof b.text === "string")
    .map((b) => b.text as string)
    .join("\n");
}

export type Turn = { user: string; assistant: string; tools: string[]; model?: string };

export function turnOf(messages: unknown[]): Turn | undefined {
  const list = (messages ?? []) as (Message & { model?: string })[];
  const user = list.find((m) => m?.role === "user");
  if (!user) return undefined;
  const words = textOf(user.content).trim();
  if (!words) return undefined;
  const answers = list.filter((m) => m?.role === "assistant");
  const last = [...answers].reverse().find((m) => textOf(m.content).trim());
  const tools: string[] = [];
  for (const m of answers) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if ((b?.type === "toolCall" || b?.type === "tool_use") && typeof b.name === "string") tools.push(b.name);
    }
  }
  return {
    user: words,
    assistant: last ? textOf(last.content).trim() : "",
    tools,
    model: answers.at(-1)?.model,
  };
}
