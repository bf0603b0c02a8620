"""From token ids back to text, byte for byte as llama.cpp's ``llama_detokenize``.

Each token has a byte string (`token_pieces`): SPM pieces with ``▁`` turned back into spaces,
``<0xNN>`` tokens as their byte, byte-level BPE tokens mapped back through GPT-2's byte table,
control and unknown tokens as their text, or nothing when special tokens are skipped.
Decoding a sequence joins them, with two llama.cpp rules on top:

* when the vocabulary adds a space prefix (SPM), one leading space of the *first* token of the
  sequence is dropped (if that first token is BOS, BOS absorbs the rule and the next token
  keeps its space);
* byte-level BPE vocabularies "clean up" spaces (`clean_spaces`): no space before ``?!.,``,
  ``" ' "`` becomes ``"'"``, and no space before ``'s 'm 're 've``.

Bytes that are not valid UTF-8 become U+FFFD. `StreamingDetokenizer` produces the same text a
token at a time.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from vexel_core.tokenizer.vocab import BPE, TokenType, Vocab

if TYPE_CHECKING:
    from vexel_core.tokenizer.tokenizer import Tokenizer

SPACE_MARK = "\u2581"

# llama.cpp's three clean-up passes, each a left-to-right scan; regular expressions over
# bytes reproduce them exactly (every pass only ever removes spaces).
_CLEANUPS = (
    (re.compile(rb" (?=[?!.,])"), b""),
    (re.compile(rb" ' "), b"'"),
    (re.compile(rb" (?='s|'m|'re|'ve)"), b""),
)
# No clean-up match is longer than 4 bytes and each begins with a space, so text can be cut
# for cleaning wherever the 3 bytes before the cut hold no space (see StreamingDetokenizer).
_CLEANUP_REACH = 3


def clean_spaces(text: bytes) -> bytes:
    for pattern, replacement in _CLEANUPS:
        text = pattern.sub(replacement, text)
    return text


def _gpt2_byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-in character for each byte, inverted."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            chars[byte] = chr(byte)
        else:
            chars[byte] = chr(256 + extra)
            extra += 1
    return {char: byte for byte, char in chars.items()}


_BYTE_DECODER = _gpt2_byte_decoder()


def _byte_level_bytes(text: str) -> bytes:
    out = bytearray()
    for char in text:
        byte = _BYTE_DECODER.get(char)
        if byte is not None:
            out.append(byte)
        else:  # what llama.cpp writes for a character outside GPT-2's byte table
            hexes = "".join(f"{b:02x}" for b in char.encode())
            out += f"[UNK_BYTE_0x{hexes}{text}]".encode()
    return bytes(out)


def token_pieces(vocab: Vocab, *, special: bool) -> list[bytes]:
    """Each token's bytes (llama.cpp's ``token_to_piece``); *special*: render control tokens."""
    pieces = []
    for text, kind in zip(vocab.tokens, vocab.types, strict=True):
        if kind in (TokenType.CONTROL, TokenType.UNKNOWN):
            pieces.append(text.encode() if special else b"")
        elif kind == TokenType.USER_DEFINED:
            pieces.append(text.encode())
        elif kind == TokenType.NORMAL:
            pieces.append(_byte_level_bytes(text) if vocab.model == BPE
                          else text.replace(SPACE_MARK, " ").encode())
        elif kind == TokenType.BYTE:
            pieces.append(bytes([int(text[3:5], 16)]))  # <0xNN>
        else:  # unused and undefined tokens print nothing
            pieces.append(b"")
    return pieces


def join_pieces(vocab: Vocab, pieces: list[bytes], ids: Iterable[int]) -> bytes:
    """The bytes of *ids* (already range-checked), with llama.cpp's two rules applied."""
    out = bytearray()
    first = True
    for i in ids:
        piece = pieces[i]
        if first and vocab.add_space_prefix and piece.startswith(b" "):
            piece = piece[1:]
        first = False
        out += piece
    return clean_spaces(bytes(out)) if vocab.clean_spaces else bytes(out)


class StreamingDetokenizer:
    """Text as tokens arrive, never cut inside a UTF-8 character.

    By default the deltas add up to `decode`: ``"".join(map(push, ids)) + flush() ==
    tokenizer.decode(ids)``. Incomplete UTF-8 waits for the next token (`flush` turns what never
    completed into U+FFFD, as `decode` does); where the vocabulary cleans up spaces, a space
    and the 3 bytes after it also wait, since the next token may remove that space.

    *completion*: the tokens continue a prompt, as a generation does. The text is then what
    llama.cpp streams for a completion: each token's text as it is, the first token keeping its
    leading space and no clean-up (which belongs to decoding a whole text).
    """

    def __init__(self, tokenizer: Tokenizer, *, skip_special: bool = False,
                 completion: bool = False) -> None:
        self._tokenizer = tokenizer
        self._pieces = tokenizer.pieces(skip_special=skip_special)
        self._strip_first_space = tokenizer.vocab.add_space_prefix and not completion
        self._clean = tokenizer.vocab.clean_spaces and not completion
        self._pending = bytearray()  # bytes whose clean-up is not settled yet
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def push(self, token_id: int) -> str:
        """The text that *token_id* completes (possibly empty)."""
        self._tokenizer.check_id(token_id)
        piece = self._pieces[token_id]
        if self._strip_first_space and piece.startswith(b" "):
            piece = piece[1:]
        self._strip_first_space = False
        if not self._clean:
            return self._utf8.decode(piece)
        self._pending += piece
        cut = self._settled_length()
        settled = clean_spaces(bytes(self._pending[:cut]))
        del self._pending[:cut]
        return self._utf8.decode(settled)

    def flush(self) -> str:
        """The text still held back; call it once the sequence has ended."""
        rest = bytes(self._pending)
        self._pending.clear()
        if self._clean:
            rest = clean_spaces(rest)
        return self._utf8.decode(rest, final=True)

    def _settled_length(self) -> int:
        """How many pending bytes no later token can change under clean-up.

        A clean-up match starts with a space and spans at most 4 bytes, and only spaces are
        ever removed; so if the 3 bytes before a cut hold no space, no match crosses the cut
        and the bytes before it clean up the same whatever follows.
        """
        cut = len(self._pending)
        while cut > 0:
            space = self._pending.rfind(b" ", max(0, cut - _CLEANUP_REACH), cut)
            if space < 0:
                return cut
            cut = space
        return 0
