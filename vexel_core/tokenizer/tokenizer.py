"""`Tokenizer`: text to token ids and back, as llama.cpp does it for the same GGUF file."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tokenizers import Tokenizer as HFTokenizer

from vexel_core.errors import TokenizerError
from vexel_core.logs import get_logger
from vexel_core.tokenizer.build import build_hf_tokenizer
from vexel_core.tokenizer.chat import CHATML_TEMPLATE, ChatTemplate
from vexel_core.tokenizer.detokenize import join_pieces, token_pieces
from vexel_core.tokenizer.vocab import TokenType, Vocab

log = get_logger(__name__)


class Tokenizer:
    """A GGUF file's tokenizer: SentencePiece (``llama``) or byte-level BPE (``gpt2``).

    Token ids, decoded text and end-of-generation tokens agree with llama.cpp on the same file.
    Build it with `from_gguf` or `from_metadata`; it is safe to share between threads.
    """

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self._hf: dict[bool, HFTokenizer] = {True: build_hf_tokenizer(vocab, parse_special=True)}
        self._pieces: dict[bool, list[bytes]] = {}
        self._template: ChatTemplate | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any], source: str = "<metadata>") -> Tokenizer:
        """Build from GGUF metadata (plain Python values); *source* names it in errors."""
        return cls(Vocab.from_metadata(metadata, source))

    @classmethod
    def from_gguf(cls, gguf_file: Any) -> Tokenizer:
        """Build from an open `vexel_core.gguf.reader.GGUFFile` (anything with metadata, path)."""
        return cls.from_metadata(gguf_file.metadata, str(gguf_file.path))

    # -- facts about the vocabulary ---------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return self.vocab.size

    @property
    def bos_id(self) -> int | None:
        return self.vocab.special_ids["bos"]

    @property
    def eos_id(self) -> int | None:
        return self.vocab.special_ids["eos"]

    @property
    def stop_ids(self) -> frozenset[int]:
        """Tokens that end generation (llama.cpp's EOG set: EOS, EOT, EOM and their kin)."""
        return self.vocab.eog_ids

    @property
    def add_bos(self) -> bool:
        return self.vocab.add_bos

    @property
    def chat_template(self) -> str | None:
        """The file's template, or None (then `apply_chat_template` uses ChatML)."""
        return self.vocab.chat_template

    def is_special(self, token_id: int) -> bool:
        """A control or unknown token: skipped by ``decode(skip_special=True)``."""
        self.check_id(token_id)
        return self.vocab.types[token_id] in (TokenType.CONTROL, TokenType.UNKNOWN)

    # -- text to ids ------------------------------------------------------------------------

    def encode(self, text: str, *, add_special: bool = True, parse_special: bool = True
               ) -> list[int]:
        """Token ids of *text*.

        *add_special*: add BOS / EOS where the file says to. *parse_special*: a control
        token's text in *text* (``<|eot_id|>``) becomes that token; otherwise it is tokenized
        as plain text. User-defined tokens are matched either way, as in llama.cpp.
        """
        if not isinstance(text, str):
            raise TokenizerError(f"cannot tokenize a {type(text).__name__}; expected str")
        ids: list[int] = self._hf_for(parse_special).encode(text, add_special_tokens=False).ids
        if add_special and self.vocab.add_bos:
            ids.insert(0, self.bos_id)  # type: ignore[arg-type]  # Vocab checked it exists
        if add_special and self.vocab.add_eos:
            ids.append(self.eos_id)  # type: ignore[arg-type]
        return ids

    def _hf_for(self, parse_special: bool) -> HFTokenizer:
        # The literal (no special matching) variant is built on first use: most callers
        # never need it and it costs as much memory as the vocabulary.
        if parse_special not in self._hf:
            with self._lock:
                if parse_special not in self._hf:
                    self._hf[parse_special] = build_hf_tokenizer(self.vocab,
                                                                 parse_special=parse_special)
        return self._hf[parse_special]

    # -- ids to text ------------------------------------------------------------------------

    def check_id(self, token_id: int) -> None:
        if not isinstance(token_id, int) or isinstance(token_id, bool) \
                or not 0 <= token_id < self.vocab.size:
            raise TokenizerError(f"token id {token_id!r} is out of range: the vocabulary of "
                                 f"{self.vocab.source} has ids 0..{self.vocab.size - 1}")

    def pieces(self, *, skip_special: bool) -> list[bytes]:
        """Every token's bytes (control tokens empty when *skip_special*); built once."""
        if skip_special not in self._pieces:
            with self._lock:
                self._pieces.setdefault(skip_special,
                                        token_pieces(self.vocab, special=not skip_special))
        return self._pieces[skip_special]

    def decode_bytes(self, ids: Iterable[int], *, skip_special: bool = False) -> bytes:
        """The bytes of *ids*, which need not be valid UTF-8 (a partial character)."""
        ids = list(ids)
        for i in ids:
            self.check_id(i)
        return join_pieces(self.vocab, self.pieces(skip_special=skip_special), ids)

    def decode(self, ids: Iterable[int], *, skip_special: bool = False) -> str:
        """The text of *ids*, as llama.cpp's ``llama_detokenize`` gives it.

        Control tokens appear as their text unless *skip_special*. Invalid UTF-8 (a token
        sequence that ends inside a character) becomes U+FFFD.
        """
        return self.decode_bytes(ids, skip_special=skip_special).decode("utf-8", "replace")

    def token_bytes(self, token_id: int) -> bytes:
        """The raw bytes one token stands for (control tokens: their text); OpenAI logprobs."""
        self.check_id(token_id)
        return self.pieces(skip_special=False)[token_id]

    def piece(self, token_id: int) -> str:
        """A token for display: its text, with a byte that is no character alone as <0xNN>."""
        raw = self.token_bytes(token_id)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return "".join(f"<0x{b:02X}>" for b in raw)

    # -- chat -------------------------------------------------------------------------------

    def apply_chat_template(self, messages: Sequence[Mapping[str, Any]], *,
                            add_generation_prompt: bool = True, **extra: Any) -> str:
        """The prompt text for *messages* (``[{"role": ..., "content": ...}, ...]``).

        Uses the file's ``tokenizer.chat_template``; a file without one gets ChatML (logged
        once). *extra* goes to the template as variables (``tools``, ``date_string``, ...).
        """
        template = self._chat_template()
        return template.render(
            messages, bos_token=self._token_text("bos"), eos_token=self._token_text("eos"),
            add_generation_prompt=add_generation_prompt, **extra,
        )

    def encode_chat(self, messages: Sequence[Mapping[str, Any]], *,
                    add_generation_prompt: bool = True, **extra: Any) -> list[int]:
        """Token ids of the rendered chat, with exactly one BOS where the file wants one.

        Templates often write ``bos_token`` themselves; then no second BOS is added. EOS is
        never appended (it would end the turn the model is asked to write).
        """
        text = self.apply_chat_template(messages, add_generation_prompt=add_generation_prompt,
                                        **extra)
        ids = self.encode(text, add_special=False, parse_special=True)
        if self.add_bos and (not ids or ids[0] != self.bos_id):
            ids.insert(0, self.bos_id)  # type: ignore[arg-type]
        return ids

    def _chat_template(self) -> ChatTemplate:
        if self._template is None:
            text = self.vocab.chat_template
            if text is None:
                log.warning("no chat template in the model file; using ChatML",
                            source=self.vocab.source)
                text = CHATML_TEMPLATE
            self._template = ChatTemplate(text, self.vocab.source)
        return self._template

    def _token_text(self, which: str) -> str:
        token_id = self.vocab.special_ids[which]
        return self.vocab.tokens[token_id] if token_id is not None else ""

    def __repr__(self) -> str:
        return (f"Tokenizer({self.vocab.source!r}, model={self.vocab.model!r}, "
                f"vocab_size={self.vocab_size})")
