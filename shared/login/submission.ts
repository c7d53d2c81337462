import type { FlowPrompt, Submission } from "./types.ts";

/**
 * Reading a submit body against the prompt it answers. The route can call `submissionProblem`
 * before accepting a submit (a 400 naming the problem), and the engine reads the values with the
 * same rules, so both agree on what a submission means.
 */

export type SubmissionIntent =
  | { kind: "choice"; choiceId: string; values: Record<string, string> }
  | { kind: "fields"; values: Record<string, string> }
  | { kind: "nothing" };

/** The field types whose values stay the same from one login to the next, and may be given again. */
const durableFieldTypes = ["identifier", "password", "text"] as const;

export function isDurableFieldType(type: string): type is (typeof durableFieldTypes)[number] {
  return (durableFieldTypes as readonly string[]).includes(type);
}

/**
 * The answer to a step from values given before, by credential ref: only when the step asks for
 * nothing but durable values and every required one is at hand (a one-time code is asked again).
 */
export function durableAnswer(
  fields: ReadonlyArray<{ id: string; ref: string; type: string; required?: boolean }>,
  valuesByRef: Readonly<Record<string, string>>,
): Submission | null {
  const answerable = fields.length > 0 && fields.every((field) => isDurableFieldType(field.type) && (valuesByRef[field.ref] !== undefined || !field.required));
  if (!answerable) return null;
  return { field_values: Object.fromEntries(fields.flatMap((field) => (valuesByRef[field.ref] === undefined ? [] : [[field.id, valuesByRef[field.ref] as string]]))) };
}

export function submissionProblem(prompt: FlowPrompt, submission: Submission): string | null {
  const intent = readSubmission(prompt, submission);
  return "problem" in intent ? intent.problem : null;
}

export function readSubmission(prompt: FlowPrompt, submission: Submission): SubmissionIntent | { problem: string } {
  const read = fieldValues(prompt, submission);
  if ("problem" in read) return { problem: read.problem };
  const values = read.values;
  const chosen = chosenChoice(prompt, submission);
  if (chosen !== null) return typeof chosen === "string" ? { kind: "choice", choiceId: chosen, values } : chosen;
  if (Object.keys(values).length > 0) {
    const missing = prompt.fields.find((field) => field.required && !values[field.id]);
    if (missing) return { problem: `missing a value for field '${missing.id}' (${missing.label ?? missing.ref})` };
    return { kind: "fields", values };
  }
  if (prompt.external_action_message !== null && prompt.fields.length === 0 && prompt.choices.length === 0) return { kind: "nothing" };
  return { problem: `the submission answers nothing; this step asks for ${describe(prompt)}` };
}

/** Values by field id, from `field_values` (by id) and `fields` (by id, credential ref or input name). */
function fieldValues(prompt: FlowPrompt, submission: Submission): { values: Record<string, string> } | { problem: string } {
  const idOf = new Map<string, string>();
  for (const field of prompt.fields) {
    idOf.set(field.id, field.id);
    idOf.set(field.ref, field.id);
    const discovered = prompt.discovered_fields.find((candidate) => candidate.selector === field.observed_selector);
    if (discovered) idOf.set(discovered.name, field.id);
  }
  const values: Record<string, string> = {};
  const entries = [...Object.entries(submission.field_values ?? {}), ...Object.entries(submission.fields ?? {})];
  for (const [key, value] of entries) {
    const id = idOf.get(key);
    if (!id) {
      const known = prompt.fields.map((field) => field.id).join(", ");
      return { problem: `unknown field '${key}'; this step's fields are: ${known || "none"}` };
    }
    values[id] = value;
  }
  return { values };
}

/** The choice id a submission selects, null when it selects none, or the problem with its selector. */
function chosenChoice(prompt: FlowPrompt, submission: Submission): string | { problem: string } | null {
  const choiceIds = prompt.choices.map((choice) => choice.id);
  if (submission.selected_choice_id !== undefined) {
    if (choiceIds.includes(submission.selected_choice_id)) return submission.selected_choice_id;
    return { problem: `unknown selected_choice_id '${submission.selected_choice_id}'; the choices are: ${choiceIds.join(", ") || "none"}` };
  }
  if (submission.mfa_option_id !== undefined) {
    const wanted = submission.mfa_option_id;
    const match = prompt.choices.find((choice) => choice.type === "mfa_method" && (choice.id === wanted || choice.id.startsWith(`${wanted}_`)));
    if (match) return match.id;
    return { problem: `unknown mfa_option_id '${wanted}'; the methods offered are: ${prompt.mfa_options.map((option) => option.type).join(", ") || "none"}` };
  }
  if (submission.sign_in_option_id !== undefined) {
    const match = prompt.sign_in_options.find((option) => option.id === submission.sign_in_option_id);
    if (match) return match.id;
    return { problem: `unknown sign_in_option_id '${submission.sign_in_option_id}'; the options are: ${prompt.sign_in_options.map((option) => option.id).join(", ") || "none"}` };
  }
  if (submission.sso_button_selector !== undefined || submission.sso_provider !== undefined) {
    const wanted = (submission.sso_provider ?? "").toLowerCase();
    const button = prompt.pending_sso_buttons.find(
      (candidate) =>
        candidate.selector === submission.sso_button_selector ||
        (wanted !== "" && (candidate.provider === wanted || candidate.label.toLowerCase().includes(wanted))),
    );
    const choice = button && prompt.choices.find((candidate) => candidate.type === "sso_provider" && candidate.observed_selector === button.selector);
    if (choice) return choice.id;
    return { problem: `no such SSO button; the page offers: ${prompt.pending_sso_buttons.map((candidate) => candidate.provider).join(", ") || "none"}` };
  }
  return null;
}

function describe(prompt: FlowPrompt): string {
  const parts = [
    prompt.fields.length > 0 ? `fields ${prompt.fields.map((field) => field.id).join(", ")}` : "",
    prompt.choices.length > 0 ? `a choice among ${prompt.choices.map((choice) => choice.id).join(", ")}` : "",
  ].filter(Boolean);
  return parts.join(" or ") || "nothing";
}
