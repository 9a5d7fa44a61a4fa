"""The one table of answer-statement words, per language: a contributor adds a language (or a phrase) here and
every reader (choice, yes/no, multi-select, boxes) and every test generator picks it up.

Each entry is a :class:`Language`. Its fields are regular-expression *fragments* (matched case-insensitively,
after :func:`medr2.scoring.extract.statements.normalise` has folded full-width forms to ASCII, so ``Ｂ``/``：``/``（``
need no entry of their own); a space in a fragment matches any run of white space:

* ``nouns`` + ``copulas``: a **final-answer statement** is a noun followed by a copula ("the answer is", "Antwort
  lautet", "答えは", "정답은", "ответ:"); what follows the copula is the answer;
* ``commits``: first-person **commitments** ("I choose", "je choisis", "我选") — the answer follows too;
* ``yes`` / ``no``: the yes/no words (read only where a punctuation mark, a new clause or the end follows);
* ``reject_before`` / ``reject_after``: **rejections** around an option ("not B", "B ist falsch", "B は誤り");
  their scope is the clause they stand in (``statements.clause``), never the next line or sentence;
* ``triggers``: lower-case substrings one of which every final-answer marker and commitment of the language
  contains (a speed pre-check; a language without triggers is always looked for);
* ``verdicts``: what, after an option, makes it the answer ("B is the correct answer", "Bが正解です", "la B es
  correcta");
* ``corrections`` / ``doubts``: after the last final statement, a correction commits to what follows it ("The
  answer is C. Actually, B." -> B, the change noted) and a doubt followed by another option withdraws the answer
  ("The answer is C, but wait, let me reconsider B" -> unparsed);
* ``ands`` / ``ors``: the conjunctions of a selection ("A und C": both) and of alternatives ("A oder C": no
  choice);
* ``contrasts``: a final statement that opens with a rejection and goes on with a contrast states the answer after
  it ("the answer is not A but C", "nicht A, sondern C", "不是A，而是C").

The ``samples`` are plain phrasings in that language (a final-answer prefix, a commitment prefix, a rejection
suffix) that the property tests compose with letters, markup and distractors (``tests/test_score_reading.py``):
every language must read its own samples.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    code: str
    nouns: tuple[str, ...]
    copulas: tuple[str, ...]
    commits: tuple[str, ...] = ()
    yes: tuple[str, ...] = ()
    no: tuple[str, ...] = ()
    reject_before: tuple[str, ...] = ()
    reject_after: tuple[str, ...] = ()
    contrasts: tuple[str, ...] = ()  # "not A *but* C": after a rejection, what follows a contrast is the answer
    ands: tuple[str, ...] = ()  # "A and C": a selection of several options (multi-select)
    # after an option: the option is the answer ("B is correct", "B が正解", "B ist richtig")
    verdicts: tuple[str, ...] = ()
    # after the last final statement: a correction commits to what follows ("…is C. Actually, B."); a doubt
    # followed by another option withdraws the answer ("…is C, but wait, let me reconsider B")
    corrections: tuple[str, ...] = ()
    doubts: tuple[str, ...] = ()
    ors: tuple[str, ...] = ()  # "A or C": alternatives, never a choice
    # lower-case substrings one of which every marker of the language contains (a fast pre-check: the language's
    # markers are looked for only in answers holding one); empty = always looked for
    triggers: tuple[str, ...] = ()
    # plain samples for the generators: final-answer prefixes, commitment prefixes, rejection suffixes
    sample_final: tuple[str, ...] = ()
    sample_commit: tuple[str, ...] = ()
    sample_reject: tuple[str, ...] = ()
    sample_verdict: tuple[str, ...] = ()


_EN_COPULA = (r"is", r"would be", r"should be", r"will be", r"=>", r"->", r"→", r"=", r":", r"-", r"–", r"—")

LANGUAGES: tuple[Language, ...] = (
    Language(
        "en",
        sample_verdict=(" is correct", " is the best answer"),
        verdicts=(r"is (?:the )?(?:correct|right|best|most (?:likely|appropriate|consistent|accurate))", r"fits best",
                  r"is the (?:answer|best (?:fit|match|choice|option))"),
        corrections=("actually", "i mean", "correction", "scratch that", "make that", "rather"),
        doubts=("wait", "hmm", "let me reconsider", "let me re-check", "let me recheck", "let me double-check",
                "on second thought", "not sure"),
        ands=("and",), ors=("or",),
        contrasts=(r"but(?: rather)?", r"rather"),
        nouns=(r"\b(?:(?:the|my|final|correct|best|right|most likely)\s+)*(?:answer|option|choice|selection|selected"
               r"|diagnosis)s?\b(?:\s+(?:to\s+the\s+question|here))?",),
        copulas=tuple(c + r"(?:\s+(?:therefore|thus))?" for c in _EN_COPULA),
        commits=(r"\banswer\s*\(?[a-z]*\)?\s*:",
                 r"\b(?:it|this)(?:\s+is|['’]s)\s+(?:therefore\s+|thus\s+|probably\s+|likely\s+)?(?=[(\[]?[A-Z]\b)",
                 r"\b(?:I(?:\s+would|\s+will|['’]d|['’]ll|['’]m\s+going\s+to|\s+am\s+going\s+to)?|let['’]s)\s+"
                 r"(?:choose|select|pick|go\s+with|answer|opt\s+for|say)\b\s*:?",
                 r"\bI['’]m\s+(?:going\s+with|choosing|picking|selecting)\b\s*:?"),
        yes=(r"yes", r"true", r"affirmative", r"absolutely", r"correct", r"indeed"),
        no=(r"no", r"false", r"negative", r"incorrect"),
        reject_before=(r"not", r"n't", r"nor", r"no", r"neither", r"rather than", r"instead of", r"rule out",
                       r"ruled out", r"ruling out", r"exclude", r"excluding", r"except", r"eliminate", r"eliminating",
                       r"against", r"unlike", r"without"),
        reject_after=(r"(?:is|are|was|seems|would be|appears|looks)\s+(?:also\s+|clearly\s+|definitely\s+)?"
                      r"(?:not|incorrect|wrong|unlikely|less likely|ruled out|excluded|implausible|inconsistent"
                      r"|absent)",
                      r"(?:can|could|should|must) be (?:ruled out|excluded|eliminated|dismissed)",
                      r"(?:doesn't|does not|do not|don't) (?:fit|match|apply)"),
        sample_final=("The answer is ", "Final answer: ", "The correct option is ", "Answer: ", "My answer: "),
        sample_commit=("I would choose ", "I'll go with ", "Let's pick "),
        sample_reject=(" is incorrect", " is wrong", " can be ruled out"),
    ),
    Language(
        "zh",
        sample_verdict=("是正确的", "正确"),
        verdicts=(r"(?:是|为)?(?:正确(?:的|答案)?|对的|最佳答案)",),
        corrections=("其实", "更正", "应该是"),
        doubts=("等等", "不过", "再想想"),
        ands=("和", "及", "与", "以及"), ors=("或", "或者", "还是"),
        triggers=("答", "选", "選", "回答"),
        contrasts=(r"而是",),
        nouns=(r"(?:最终|正确|最后的?)?(?:答案|选项|回答)", r"答(?=\s*:)"),
        copulas=(r"(?:应该|应|應)?\s*(?:是|为|為)?\s*:?",),
        commits=(r"(?:我)?(?:选择|选|選)\s*:?",),
        yes=(r"是的", r"是", r"对", r"正确", r"正確"), no=(r"不是", r"不对", r"没有", r"错误", r"錯誤", r"否", r"不"),
        reject_before=(r"不是", r"排除", r"而非"),
        reject_after=(r"(?:是)?(?:不对|错误|错的|不正确)", r"(?:被|可以)排除"),
        sample_final=("答案是", "最终答案：", "正确答案为 "), sample_commit=("我选", "我选择 "),
        sample_reject=("不正确", "错误"),
    ),
    Language(
        "ja",
        sample_verdict=("が正解です", "は正しい"),
        verdicts=(r"(?:が|は)\s*(?:正解|正しい|答え)",),
        corrections=("訂正", "実は"),
        doubts=("待って", "ちょっと待", "再考"),
        ands=("と", "および"), ors=("または", "もしくは"),
        triggers=("答", "解", "選"),
        contrasts=(r"ではなく",),
        nouns=(r"(?:最終的な|最終|正しい)?(?:答え|解答|回答|正解|選択肢)",), copulas=(r"は", r":"),
        commits=(r"(?:私は)?(?=[(\[]?[A-Z][)\]]?\s*を選(?:び|ぶ|択))",),
        yes=(r"はい", r"そうです"), no=(r"いいえ", r"違います", r"ありません"),
        reject_after=(r"は(?:誤り|間違い|不正解|正しくない|否定的|除外)", r"ではなく"),
        sample_final=("答えは ", "正解は", "最終回答: "), sample_commit=(), sample_reject=("は誤りです", "は不正解"),
    ),
    Language(
        "ko",
        sample_verdict=("가 정답입니다",),
        verdicts=(r"(?:가|이)\s*(?:정답|맞습니다|옳습니다)",),
        corrections=("정정", "사실은"),
        doubts=("잠깐", "다시 생각"),
        ands=("와", "과", "및"), ors=("또는", "혹은"),
        triggers=("답", "선택"),
        contrasts=(r"아니라",),
        nouns=(r"(?:최종\s*)?(?:정답|답|답변|선택지)",), copulas=(r"(?:은|는|:)",),
        commits=(r"(?=[(\[]?[A-Z][)\]]?\s*를?\s*선택)",),
        yes=(r"예", r"네", r"그렇습니다"), no=(r"아니요", r"아니오", r"아닙니다"),
        reject_after=(r"(?:은|는)\s*(?:틀렸|오답|정답이 아닙)", r"(?:가|이)?\s*아니라"),
        sample_final=("정답은 ", "최종 답: ", "답: "), sample_reject=("는 오답입니다",),
    ),
    Language(
        "es",
        sample_verdict=(" es correcta",),
        verdicts=(r"es (?:la )?(?:correcta|correcto|respuesta correcta)",),
        corrections=("en realidad", "corrijo", "mejor dicho"),
        doubts=("espera", "déjame reconsiderar"),
        ands=("y", "e"), ors=("o", "u"),
        triggers=("respuesta", "opci", "alternativa", "elijo", "escojo", "selecciono", "me quedo"),
        contrasts=(r"sino",),
        nouns=(r"\b(?:la\s+)?(?:respuesta|opción|opcion|alternativa)(?:\s+(?:correcta|final|más adecuada))?",),
        copulas=(r"(?:es|sería|:)(?: la)?(?: opción| alternativa)?",),
        commits=(r"\b(?:elijo|escojo|selecciono|me quedo con)\b\s*(?:la\s+)?(?:opción\s+)?",),
        yes=(r"sí",), no=(r"no",),
        reject_before=(r"no es", r"descarto", r"descartamos"),
        reject_after=(r"(?:es|sería) (?:incorrecta|incorrecto|falsa|poco probable)", r"(?:se )?descarta"),
        sample_final=("La respuesta correcta es ", "Respuesta final: ", "La respuesta es "),
        sample_commit=("Elijo la opción ",), sample_reject=(" es incorrecta",),
    ),
    Language(
        "fr",
        sample_verdict=(" est correcte",),
        verdicts=(r"est (?:la )?(?:correcte|bonne réponse|la bonne)",),
        corrections=("en fait", "je corrige", "plutôt"),
        doubts=("attendez", "attends", "je reconsidère"),
        ands=("et",), ors=("ou",),
        triggers=("réponse", "reponse", "option", "choisi", "sélectionne", "retiens"),
        contrasts=(r"mais",),
        nouns=(r"\b(?:la\s+)?(?:(?:bonne|meilleure)\s+)?(?:réponse|reponse|option)(?:\s+(?:finale|correcte))?",),
        copulas=(r"(?:est|serait|:)(?: la| l['’])?(?: option)?",),
        commits=(r"\bje\s+(?:choisis|choisirais|sélectionne|retiens)\b\s*(?:l['’]\s*)?(?:option\s+)?",),
        yes=(r"oui",), no=(r"non",),
        reject_before=(r"pas", r"écarte", r"exclut"),
        reject_after=(r"(?:est|serait) (?:incorrecte|incorrect|fausse|faux|peu probable|exclue?)", r"n['’]est pas"),
        sample_final=("La réponse est ", "Réponse finale : ", "La bonne réponse est "),
        sample_commit=("Je choisis ",), sample_reject=(" est incorrecte",),
    ),
    Language(
        "de",
        sample_verdict=(" ist richtig",),
        verdicts=(r"ist (?:die )?(?:richtig|korrekt|richtige Antwort)",),
        corrections=("eigentlich", "korrektur", "vielmehr"),
        doubts=("moment", "warte", "ich überlege"),
        ands=("und",), ors=("oder",),
        triggers=("antwort", "lösung", "option", "wähle", "würde", "nehme"),
        contrasts=(r"sondern",),
        nouns=(r"\b(?:die\s+)?(?:(?:richtige|korrekte|endgültige)\s+)?(?:antwort|lösung|option)",),
        copulas=(r"(?:ist|lautet|wäre|:)(?: die)?(?: Option)?",),
        commits=(r"\bich\s+(?:wähle|würde|nehme)\b\s*(?:die\s+)?(?:option\s+)?",
                 r"\b(?:ist|lautet|wäre)\s+(?:also\s+|daher\s+|somit\s+)?die\s+(?:richtige\s+|korrekte\s+)?antwort\s*:?"),
        yes=(r"ja",), no=(r"nein",),
        reject_before=(r"nicht", r"kein", r"keine"),
        reject_after=(r"(?:ist|wäre) (?:falsch|unwahrscheinlich|ausgeschlossen|nicht richtig)",),
        sample_final=("Die Antwort ist ", "Die richtige Antwort lautet ", "Antwort: "),
        sample_commit=("Ich wähle ",), sample_reject=(" ist falsch",),
    ),
    Language(
        "pt",
        sample_verdict=(" é a resposta correta",),
        verdicts=(r"(?:é|está) (?:a )?(?:correta|correto|resposta correta)",),
        corrections=("na verdade", "corrigindo"),
        doubts=("espere", "espera", "deixe-me reconsiderar"),
        ands=("e",), ors=("ou",),
        triggers=("resposta", "opç", "opca", "alternativa", "escolho", "seleciono", "fico com"),
        contrasts=(r"mas(?: sim)?", r"e sim"),
        nouns=(r"\b(?:a\s+)?(?:resposta|opção|opcao|alternativa)(?:\s+(?:correta|final))?",),
        copulas=(r"(?:é|seria|:)(?-i:[ \t]+a(?=[ \t]+\S))?(?: opção| alternativa)?",),  # "a" the article, not A
        commits=(r"\b(?:escolho|seleciono|fico com)\b\s*(?:a\s+)?(?:opção\s+)?",),
        yes=(r"sim",), no=(r"não", r"nao"),
        reject_before=(r"não é", r"descarto"),
        reject_after=(r"(?:é|seria) (?:incorreta|incorreto|falsa|improvável)",),
        sample_final=("A resposta correta é ", "Resposta final: ", "A resposta é "),
        sample_commit=("Escolho a opção ",), sample_reject=(" é incorreta",),
    ),
    Language(
        "it",
        sample_verdict=(" è corretta",),
        verdicts=(r"è (?:la )?(?:corretta|giusta|risposta corretta)",),
        corrections=("in realtà", "correggo"),
        doubts=("aspetta", "fammi riconsiderare"),
        ands=("e", "ed"), ors=("o", "oppure"),
        triggers=("risposta", "opzione", "scelgo", "seleziono"),
        contrasts=(r"ma",),
        nouns=(r"\b(?:la\s+)?(?:risposta|opzione)(?:\s+(?:corretta|finale|giusta))?",),
        copulas=(r"(?:è|sarebbe|:)(?: la| l['’])?(?: opzione)?",),
        commits=(r"\b(?:scelgo|seleziono)\b\s*(?:l['’]\s*)?(?:opzione\s+)?",),
        yes=(r"sì",), no=(r"no",),
        reject_before=(r"non è", r"escludo"),
        reject_after=(r"(?:è|sarebbe) (?:errata|sbagliata|errato|sbagliato|improbabile)",),
        sample_final=("La risposta corretta è ", "Risposta finale: ", "La risposta è "),
        sample_commit=("Scelgo l'opzione ",), sample_reject=(" è errata",),
    ),
    Language(
        "ru",
        sample_verdict=(" — правильный ответ",),
        verdicts=(r"(?:—|-)?\s*(?:правильный(?: ответ)?|верный(?: ответ)?|верно)",),
        corrections=("на самом деле", "поправка"),
        doubts=("подождите", "подожди", "хотя"),
        ands=("и",), ors=("или",),
        triggers=("ответ", "вариант", "выб"),
        contrasts=(r"а",),
        nouns=(r"(?<![\w])(?:(?:правильный|окончательный|итоговый|верный)\s+)?(?:ответ|вариант)",),
        copulas=(r"[:—–-]", r"это", r"будет"),
        commits=(r"(?<![\w])(?:я\s+)?(?:выбираю|выберу)\s*(?:вариант\s+)?",),
        yes=(r"да",), no=(r"нет",),
        reject_before=(r"не",), reject_after=(r"(?:—\s*)?(?:неверно|неверный|неправильно|исключ[её]н)",),
        sample_final=("Ответ: ", "Правильный ответ — ", "Окончательный ответ: "),
        sample_commit=("Я выбираю ",), sample_reject=(" неверно",),
    ),
)


def by_code(code: str) -> Language:
    for lang in LANGUAGES:
        if lang.code == code:
            return lang
    raise KeyError(code)
