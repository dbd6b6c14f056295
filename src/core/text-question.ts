// Does the assistant's last message end by asking the user something in plain text? Then the session waits for the
// user, and pushing the model on would answer for them. Pure and heuristic, measured on a labelled table of endings
// (test/core/text-question.test.ts prints its precision and recall). What it reads: the final prose paragraph (code
// blocks, inline code, URLs, quotations, tables and headings removed), its question marks, and phrases that ask for
// a decision or a confirmation without one ("Let me know which…", "Please confirm…").

export interface QuestionVerdict {
  asks: boolean;
  /** The sentence or phrase that decided it (for the audit detail), clipped. */
  evidence?: string;
}

const EVIDENCE_CHARS = 160;

// Question marks of the languages users write in: ASCII, full-width (CJK), Arabic, Greek question mark.
const QUESTION_END = /[?？؟;]\s*$/u;
const QUESTION_MARK = /[?？؟]/u;
// What may trail a question mark: closing brackets, quotes, markdown emphasis, emoji and spaces.
const TRAILING = /[\s)\]"'’”*_~`\p{Extended_Pictographic}\u{FE0F}\u{200D}]+$/u;

/** Politeness closers: an offer of more help, not a question the work waits on. */
const COURTESY = [
  /\b(let me know|tell me|ping me|reach out)\b[^.?!]{0,40}\b(any|further|more|other|additional)\b[^.?!]{0,20}\b(questions?|help|changes?|tweaks?|adjustments?|feedback|issues?|problems?)\b/i,
  /\blet me know if (you have|there (is|are)|anything|something|you run into|you need anything|you need any|you'd like any changes|you want any changes|you spot|you find|you notice|it (doesn't|does not) work)/i,
  /\bfeel free to\b/i,
  /\b(is there )?anything else (i can|you'd like|you would like|you want|you need)\b/i,
  /\bcan i help (you )?with anything else\b/i,
  /^(if|should|in case)\b[^.?!]*,\s*(just |please |do )?(let me know|tell me|ping me|shout)\b/i,
  /^anything else\b/i,
  /\b(si tienes|si tiene|si vous avez|wenn du|falls du|wenn sie|falls sie|se hai|se tiver)\b[^.?!]{0,30}\b(duda|dudas|pregunta|preguntas|questions?|fragen|domande|dúvidas?)\b/i,
  /\bn'hésitez pas\b/i,
  /\bhappy to help\b/i,
  /\bif you have (any )?(questions|feedback|concerns)\b/i,
  /\b(hope (this|that) helps)\b/i,
];

/** Asking for a decision, a confirmation or an answer without a question mark, in a few languages. */
const REQUESTS = [
  /\blet me know (which|whether|what|how|when|where|who|your|if you('d| would)? (like|prefer|want)|if (i|we) should|if (that|this) (works|is ok|sounds)|if you agree|once you('ve)? decided?)/i,
  /\blet me know[.!]?\s*$/i,
  /\b(please|kindly) (confirm|advise|decide|choose|pick|select|clarify|let me know|tell me|approve|review and (confirm|approve)|provide|paste|share|send|give me|supply|set|add|run|check|verify)\b/i,
  /\btell me (which|whether|what|how|if|to)\b/i,
  /\b(once|after|when|until|as soon as) you('ve| have)? (answer|answered|decide|decided|confirm|confirmed|reply|replied|respond|choose|chose|pick|picked|tell me|let me know)\b/i,
  /\b(depends?|blocked|waiting|hinges?) on (this|that|your|the answer|these)\b/i,
  /\bi('ve| have) (paused|stopped) (there|here|until)\b/i,
  /\b(need|needs) (from you|your answer|you to)\b/i,
  /\bquestions? for you\b/i,
  /\b(can't|cannot|can not|unable to|won't be able to) (continue|proceed|finish|go on|move on|get further)\b/i,
  /[([]\s*(y\/n|yes\/no|y\/N|Y\/n)\s*[)\]]/i,
  // An imperative to the user at the start of a sentence: pick, reply, send, confirm…
  /^(please[, ]+)?(pick|choose|select|reply|respond|answer|send|paste|share|provide|confirm|approve|decide|give me|upload|attach)\b/i,
  /\b(bitte (gib|geben sie|schick|sende|nenne|bestätige|wähle)|merci de (me )?(donner|confirmer|choisir|préciser)|por favor,? (dame|envíame|indícame|confirma|elige)|per favore,? (dimmi|conferma|scegli|inviami))\b/i,
  /\b(i'll|i will|i'm going to|i am going to|i'll) (wait|hold off|pause)\b/i,
  /\b(waiting|awaiting|wait) (for|on) your\b/i,
  /\b(need|require|want) your (input|decision|confirmation|approval|go-ahead|answer|choice|preference|guidance|opinion)\b/i,
  /\b(your call|up to you|your choice)\b/i,
  /\bconfirm (before|that|whether|if)\b/i,
  /\bbefore i (proceed|continue|go ahead|start|delete|drop|remove|overwrite|push|deploy|run)\b[^.]*\b(confirm|approve|ok|okay|go-ahead)\b/i,
  // German, French, Spanish, Portuguese, Italian, Russian, Chinese, Japanese, Korean.
  /\b(lass mich wissen|sag mir|sagen sie mir|bitte bestätige|bitte bestätigen|gib mir bescheid|geben sie mir bescheid)\b/i,
  /\b(dites-moi|dis-moi|faites-moi savoir|confirmez|merci de confirmer|tenez-moi au courant)\b/i,
  /\b(dime|avísame|avisame|confírmame|confirmame|confirma si|hazme saber|déjame saber)\b/i,
  /\b(me avise|me diga|confirme se|fammi sapere|dimmi|conferma)\b/i,
  /(подтвердите|подтверди|скажите|сообщите|дайте знать|напишите, (какой|какую|что))/i,
  /(请确认|请告诉我|请告知|请选择|请决定|麻烦确认|等待您的|等你的)/u,
  /(確認してください|教えてください|お知らせください|選んでください|ご指示ください)/u,
  /(확인해 주세요|알려 주세요|알려주세요|선택해 주세요)/u,
];

/** A question is addressed to the user when it asks what they want, prefer, know or allow. */
const ADDRESSED = [
  /\b(you|your|yours|you'd|you're|you've)\b/i,
  /\b(should|shall|can|could|may|would|do|must) (i|we)\b/i,
  /\b(is it|is that|would it be|is this) (ok|okay|fine|alright|all right|acceptable)\b/i,
  /\bok(ay)? (to|if)\b/i,
  // A choice between alternatives ("… 3 or 5?") is put to the user.
  /\b\w+ or \w+[^?？]*[?？]/i,
  /\b(want|like) me to\b/i,
  /^(which|what) (one|option|approach|variant|version|of these|of the two|do|would|should)\b/i,
  /^(ok|okay|sound good|sounds good|good to go|proceed|go ahead|continue|agreed|alright|all right|right)\b/i,
  /\b(soll ich|sollen wir|möchtest du|möchten sie|willst du|wollen sie|dois-je|voulez-vous|veux-tu|souhaitez-vous|quieres|prefieres|debo|deseas|vuoi|preferisci|хотите|хочешь|нужно ли|стоит ли)\b/i,
  /(你|您|吗|呢|要不要|是否)/u,
  /(ますか|ましょうか|でしょうか|どちら|よろしい)/u,
  /(할까요|하시겠어요|원하시나요|어느)/u,
];

/** What follows a question the work waits on: why the answer is needed ("…? I need it for the build target."). */
const NEEDS_ANSWER =
  /\b(i need (it|this|that|to know|the answer)|need (it|this|that) (for|to|before)|without (it|this|that|the answer)|(depends|hinges) on|blocked|can't (continue|proceed|go on)|until (you|i know)|once i know)\b|mi serve|ho bisogno|без (него|этого|неё|ответа)|не могу продолжить|brauche (ich|das|es)|ohne (das|diese|die antwort)|j'en ai besoin|sans (cela|ça|cette)|lo necesito|sin (esto|eso|ello)|preciso disso|sem isso|我需要|没有这个|がないと|が必要/i;

function clip(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > EVIDENCE_CHARS ? `${flat.slice(0, EVIDENCE_CHARS)}…` : flat;
}

/** The message as prose: code, URLs, quotations, tables and headings out; paragraphs kept. */
function proseOf(text: string): string {
  return (
    text
      .replace(/\r\n?/g, "\n")
      // Fenced code blocks (``` or ~~~), whole; an unclosed fence runs to the end.
      .replace(/^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?(^[ \t]*\1[ \t]*$|(?![\s\S]))/gm, "\n")
      .replace(/`[^`\n]*`/g, "code")
      .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s)\]>]+/gi, "link")
      .replace(/\bwww\.[^\s)\]>]+/gi, "link")
      // Quotations: "…", “…”, «…», 「…」 with a question inside are someone else's words; so is a 'quoted question?'.
      .replace(/"[^"\n]{0,200}"|“[^”\n]{0,200}”|«[^»\n]{0,200}»|「[^」\n]{0,200}」|『[^』\n]{0,200}』/g, (q) =>
        QUESTION_MARK.test(q) ? "quote" : q,
      )
      .replace(/(^|[\s:(])['‘][^'‘’\n]{1,200}\?['’](?=[\s.,;:!)—–-]|$)/gm, "$1quote")
      .split("\n")
      // Headings, block quotes, tables, rules, and the questions of a FAQ ("Q: …") are not asked of the user.
      .filter(
        (line, index, lines) =>
          !/^\s*(#{1,6}\s|>|\|)/.test(line) &&
          !/^\s*[-=*_]{3,}\s*$/.test(line) &&
          !/^\s*[*_]*(Q|FAQ)\s*[:.]/i.test(line) &&
          // A line that is bold and nothing else, with text after it, is a heading ("**Can I…?**" then the answer).
          !(/^\s*(\*\*|__)[^*_]+(\*\*|__)\s*$/.test(line) && lines.slice(index + 1).some((l) => l.trim() !== "")),
      )
      .join("\n")
  );
}

const LIST_ITEM = /^\s*([-*+•]|\d+[.)]|[a-z][.)]|\[[ x]\])\s+/i;

/** The closing region: the last paragraph, with the one before it when the last is only a list or a short sign-off. */
function closingRegion(prose: string): string {
  const paragraphs = prose
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  const last = paragraphs.at(-1);
  if (last === undefined) return "";
  const previous = paragraphs.at(-2);
  const onlyList = last.split("\n").every((line) => LIST_ITEM.test(line));
  const shortSignOff = last.length < 80 && !QUESTION_MARK.test(last) && !REQUESTS.some((r) => r.test(last));
  const aside = /^\(.*\)[.!]?$/s.test(last);
  return previous !== undefined && (onlyList || shortSignOff || aside) ? `${previous}\n${last}` : last;
}

/** Sentences with their terminators; list items and lines end a sentence too. */
function sentencesOf(region: string): string[] {
  const sentences: string[] = [];
  for (const line of region.split("\n")) {
    const body = line.replace(LIST_ITEM, "").trim();
    if (!body) continue;
    const parts = body.match(
      /[^.!?。！？؟]+(?:[.!?。！？؟]+(?:[)\]"'’”*_~\s]|\p{Extended_Pictographic}|\u{FE0F})*|$)/gu,
    ) ?? [body];
    for (const part of parts) if (part.trim()) sentences.push(part.trim());
  }
  return sentences;
}

function isQuestion(sentence: string): boolean {
  return QUESTION_END.test(sentence.replace(TRAILING, "")) && QUESTION_MARK.test(sentence);
}

export function detectTextQuestion(text: string): QuestionVerdict {
  if (!text) return { asks: false };
  const region = closingRegion(proseOf(text));
  if (!region) return { asks: false };
  const sentences = sentencesOf(region).filter((s) => !COURTESY.some((c) => c.test(s)));
  for (let i = sentences.length - 1; i >= 0; i--) {
    const sentence = sentences[i]!;
    if (!isQuestion(sentence)) continue;
    const last = i === sentences.length - 1;
    // A question followed by more sentences is rhetorical ("Why does it fail? Because…") unless it speaks to the user,
    // or what follows is not its answer but context ("…? I need it for the build target.").
    const stripped = sentence.replace(/^[\s*_~"'“‘(]+/, "");
    const following = sentences[i + 1] ?? "";
    if (last || ADDRESSED.some((a) => a.test(stripped)) || NEEDS_ANSWER.test(following)) {
      return { asks: true, evidence: clip(sentence) };
    }
  }
  for (const sentence of sentences) {
    if (REQUESTS.some((r) => r.test(sentence))) return { asks: true, evidence: clip(sentence) };
  }
  return { asks: false };
}
