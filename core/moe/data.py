"""A deterministic generator of simple English in which every word is labelled with its category.

Why generate text: no pretrained MoE model ships in a package, so the repo trains its own (scripts/train_moe.py),
and with labelled text we can *measure* what each expert specialises in (core/moe/specialisation.py:
category_shares) instead of guessing it from a few examples. Every word belongs to exactly one category (checked
at import), so a token's category is a lookup, not a judgement.

The grammar has enough structure for a language model to learn: subject-verb agreement ("the cat sees" vs
"the cats see"), a/an before vowels, transitive verbs taking objects, questions with "does"/"did" and a base
verb, clauses joined by conjunctions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

CATEGORIES = (
    "determiner",
    "adjective",
    "noun",
    "pronoun",
    "verb",
    "adverb",
    "preposition",
    "conjunction",
    "punctuation",
)
UNKNOWN = "unknown"  # a word outside the vocabulary (the tokenizer maps it to [UNK])
SPECIAL = "special"  # [BOS], [PAD]

# (singular, plural). Animate nouns can be subjects; every noun can be an object.
ANIMATE_NOUNS = [
    ("cat", "cats"),
    ("dog", "dogs"),
    ("bird", "birds"),
    ("child", "children"),
    ("teacher", "teachers"),
    ("farmer", "farmers"),
    ("king", "kings"),
    ("queen", "queens"),
    ("girl", "girls"),
    ("boy", "boys"),
    ("mouse", "mice"),
    ("fox", "foxes"),
    ("horse", "horses"),
    ("baby", "babies"),
    ("doctor", "doctors"),
    ("friend", "friends"),
    ("student", "students"),
    ("man", "men"),
    ("woman", "women"),
    ("owl", "owls"),
]
THING_NOUNS = [
    ("ball", "balls"),
    ("book", "books"),
    ("apple", "apples"),
    ("box", "boxes"),
    ("tree", "trees"),
    ("house", "houses"),
    ("garden", "gardens"),
    ("river", "rivers"),
    ("park", "parks"),
    ("table", "tables"),
    ("hat", "hats"),
    ("car", "cars"),
    ("cake", "cakes"),
    ("letter", "letters"),
    ("door", "doors"),
    ("hill", "hills"),
    ("mat", "mats"),
    ("city", "cities"),
    ("school", "schools"),
    ("song", "songs"),
    ("bag", "bags"),
    ("egg", "eggs"),
    ("island", "islands"),
    ("orange", "oranges"),
]
NAMES = ["tom", "anna", "sam", "mia", "leo", "kim", "max", "eva"]  # proper nouns: category "noun"

# (base, third person singular, past)
TRANSITIVE_VERBS = [
    ("see", "sees", "saw"),
    ("chase", "chases", "chased"),
    ("like", "likes", "liked"),
    ("find", "finds", "found"),
    ("eat", "eats", "ate"),
    ("help", "helps", "helped"),
    ("follow", "follows", "followed"),
    ("love", "loves", "loved"),
    ("hold", "holds", "held"),
    ("carry", "carries", "carried"),
    ("push", "pushes", "pushed"),
    ("call", "calls", "called"),
    ("visit", "visits", "visited"),
    ("take", "takes", "took"),
    ("make", "makes", "made"),
    ("read", "reads", "read"),
    ("want", "wants", "wanted"),
    ("drop", "drops", "dropped"),
]
INTRANSITIVE_VERBS = [
    ("run", "runs", "ran"),
    ("sleep", "sleeps", "slept"),
    ("sit", "sits", "sat"),
    ("walk", "walks", "walked"),
    ("jump", "jumps", "jumped"),
    ("sing", "sings", "sang"),
    ("swim", "swims", "swam"),
    ("laugh", "laughs", "laughed"),
    ("cry", "cries", "cried"),
    ("wait", "waits", "waited"),
    ("play", "plays", "played"),
    ("dance", "dances", "danced"),
    ("smile", "smiles", "smiled"),
    ("fall", "falls", "fell"),
]
AUXILIARIES = ["does", "do", "did"]  # category "verb"

ADJECTIVES = [
    "big",
    "small",
    "old",
    "young",
    "happy",
    "sad",
    "red",
    "blue",
    "green",
    "little",
    "tall",
    "quiet",
    "angry",
    "kind",
    "lazy",
    "brave",
    "hungry",
    "tired",
    "empty",
    "ugly",
]
ADVERBS = ["quickly", "slowly", "quietly", "happily", "loudly", "often", "today", "again", "together", "early"]
PREPOSITIONS = ["in", "on", "under", "near", "with", "behind", "over", "into", "from", "to", "at", "across"]
CONJUNCTIONS = ["and", "but", "because", "so", "while", "when", "or"]
PUNCTUATION = [".", ",", "?", "!"]

# Subject pronouns with their agreement (True = takes the third person singular verb), object pronouns.
SUBJECT_PRONOUNS = [
    ("i", False),
    ("you", False),
    ("he", True),
    ("she", True),
    ("it", True),
    ("we", False),
    ("they", False),
]
OBJECT_PRONOUNS = ["me", "you", "him", "her", "it", "us", "them"]
DETERMINERS_SINGULAR = ["the", "a", "this", "every", "my", "your", "his", "our", "their"]
DETERMINERS_PLURAL = ["the", "these", "some", "many", "my", "your", "his", "our", "their"]
VOWELS = "aeiou"


def _build_lexicon() -> dict[str, str]:
    entries: list[tuple[str, str]] = []
    entries += [(w, "noun") for pair in ANIMATE_NOUNS + THING_NOUNS for w in pair] + [(n, "noun") for n in NAMES]
    entries += [(w, "verb") for triple in TRANSITIVE_VERBS + INTRANSITIVE_VERBS for w in triple]
    entries += [(w, "verb") for w in AUXILIARIES]
    entries += [(w, "adjective") for w in ADJECTIVES] + [(w, "adverb") for w in ADVERBS]
    entries += [(w, "preposition") for w in PREPOSITIONS] + [(w, "conjunction") for w in CONJUNCTIONS]
    entries += [(w, "punctuation") for w in PUNCTUATION]
    entries += [(w, "pronoun") for w, _ in SUBJECT_PRONOUNS] + [(w, "pronoun") for w in OBJECT_PRONOUNS]
    entries += [(w, "determiner") for w in DETERMINERS_SINGULAR + DETERMINERS_PLURAL + ["an"]]
    lexicon: dict[str, str] = {}
    for word, category in entries:
        # One category per word, or "what does expert 3 prefer?" would depend on a labelling choice.
        if lexicon.get(word, category) != category:
            raise ValueError(f"{word!r} is both {lexicon[word]} and {category}")
        lexicon[word] = category
    return lexicon


LEXICON: dict[str, str] = _build_lexicon()


def vocabulary() -> list[str]:
    """Every word the generator can produce, in a fixed order (the tokenizer's vocabulary after specials)."""
    return sorted(LEXICON)


def category_of(word: str) -> str:
    return LEXICON.get(word.lower(), UNKNOWN)


@dataclass
class Sentence:
    words: list[str]  # lower case; punctuation as separate words
    categories: list[str]  # one per word

    @property
    def text(self) -> str:
        """Readable form: capitalised, punctuation attached ("The cat sees a dog.")."""
        out = ""
        for w in self.words:
            out += w if (w in PUNCTUATION or not out) else " " + w
        return out[:1].upper() + out[1:]


class _Builder:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.words: list[str] = []

    def add(self, *words: str) -> None:
        self.words.extend(words)

    def noun_phrase(self, subject: bool) -> bool:
        """Adds a noun phrase; returns True if it is third person singular (for verb agreement)."""
        r = self.rng.random()
        if r < 0.25:  # pronoun
            if subject:
                word, singular = self.rng.choice(SUBJECT_PRONOUNS)
            else:
                word, singular = self.rng.choice(OBJECT_PRONOUNS), False
            self.add(word)
            return singular
        if r < 0.35:
            self.add(self.rng.choice(NAMES))
            return True
        plural = self.rng.random() < 0.4
        nouns = ANIMATE_NOUNS if subject else ANIMATE_NOUNS + THING_NOUNS
        noun = self.rng.choice(nouns)[1 if plural else 0]
        det = self.rng.choice(DETERMINERS_PLURAL if plural else DETERMINERS_SINGULAR)
        adjectives = self.rng.sample(ADJECTIVES, self.rng.choice([0, 0, 1, 1, 2]))
        following = (adjectives + [noun])[0]
        if det == "a" and following[0] in VOWELS:
            det = "an"
        self.add(det, *adjectives, noun)
        return not plural

    def verb_phrase(self, singular: bool, tense: str) -> None:
        transitive = self.rng.random() < 0.6
        verb = self.rng.choice(TRANSITIVE_VERBS if transitive else INTRANSITIVE_VERBS)
        if tense == "base":
            self.add(verb[0])
        elif tense == "past":
            self.add(verb[2])
        else:
            self.add(verb[1] if singular else verb[0])
        if transitive:
            self.noun_phrase(subject=False)
        if self.rng.random() < 0.3:
            self.add(self.rng.choice(PREPOSITIONS))
            self.noun_phrase(subject=False)
        if self.rng.random() < 0.25:
            self.add(self.rng.choice(ADVERBS))

    def clause(self) -> None:
        tense = "past" if self.rng.random() < 0.5 else "present"
        singular = self.noun_phrase(subject=True)
        self.verb_phrase(singular, tense)

    def question(self) -> None:
        past = self.rng.random() < 0.5
        start = len(self.words)
        self.add("")  # placeholder for the auxiliary, which agrees with the subject that follows
        singular = self.noun_phrase(subject=True)
        self.words[start] = "did" if past else ("does" if singular else "do")
        self.verb_phrase(singular, "base")


def generate_sentence(rng: random.Random) -> Sentence:
    b = _Builder(rng)
    r = rng.random()
    if r < 0.15:
        b.question()
        b.add("?")
    else:
        b.clause()
        while rng.random() < 0.3:
            if rng.random() < 0.5:
                b.add(",")
            b.add(rng.choice(CONJUNCTIONS))
            b.clause()
        b.add("!" if rng.random() < 0.1 else ".")
    return Sentence(b.words, [LEXICON[w] for w in b.words])


def generate_sentences(n: int, seed: int) -> list[Sentence]:
    """n sentences, the same ones for the same seed on every machine (Python's Mersenne Twister)."""
    rng = random.Random(seed)
    return [generate_sentence(rng) for _ in range(n)]


def generate_text(n: int, seed: int) -> str:
    return " ".join(s.text for s in generate_sentences(n, seed))
