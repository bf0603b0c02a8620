"""``vexel tokenize``: a model's token ids for a text, or the text for token ids."""

from __future__ import annotations

import json
import re
import sys

import click

from vexel_core.cli.options import common_options, settings_from_cli
from vexel_core.errors import TokenizerError


@click.command()
@click.argument("text", required=False, default=None)
@click.option("-m", "--model", type=click.Path(dir_okay=False), default=None,
              help="GGUF file (default: the setting model.path, else the shipped vexel-tiny).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of lines.")
@click.option("--no-bos", is_flag=True, help="Do not add the BOS (and EOS) the model adds.")
@click.option("--no-parse-special", is_flag=True,
              help="Tokenize control-token text such as <|eot_id|> as plain text.")
@click.option("--detokenize", is_flag=True,
              help="TEXT is token ids (separated by spaces or commas); print their text.")
@common_options
def tokenize(text: str | None, model: str | None, as_json: bool, no_bos: bool,
             no_parse_special: bool, detokenize: bool, config_file: str | None,
             log_level: str | None, log_format: str | None) -> None:
    """Print the token ids and pieces of TEXT ('-' or absent: standard input)."""
    from vexel_core.gguf.reader import GGUFFile
    from vexel_core.tokenizer import Tokenizer

    if text is None or text == "-":
        if sys.stdin.isatty() and text is None:
            raise click.UsageError("give a TEXT, or '-' to read it from standard input")
        text = sys.stdin.read()
    settings = settings_from_cli(config_file, log_level, log_format, model=model)
    path = settings.model.path
    if path is None:
        from vexel_core.assets import default_model_path

        path = str(default_model_path())
    with GGUFFile(path) as gguf_file:
        tok = Tokenizer.from_gguf(gguf_file)

    if detokenize:
        ids = _parse_ids(text)
        decoded = tok.decode(ids)
        click.echo(json.dumps({"ids": ids, "text": decoded}, ensure_ascii=False) if as_json
                   else decoded)
        return
    ids = tok.encode(text, add_special=not no_bos, parse_special=not no_parse_special)
    pieces = [tok.piece(i) for i in ids]
    if as_json:
        click.echo(json.dumps({"ids": ids, "pieces": pieces}, ensure_ascii=False))
        return
    width = len(str(max(ids, default=0)))
    for token_id, piece in zip(ids, pieces, strict=True):
        # JSON quoting shows spaces, tabs and newlines inside a piece
        click.echo(f"{token_id:>{width}} {json.dumps(piece, ensure_ascii=False)}")


def _parse_ids(text: str) -> list[int]:
    words = [w for w in re.split(r"[\s,\[\]]+", text) if w]
    bad = [w for w in words if not re.fullmatch(r"\d+", w)]
    if bad:
        raise TokenizerError(f"--detokenize takes token ids (non-negative integers separated "
                             f"by spaces or commas); {bad[0]!r} is not one")
    return [int(w) for w in words]
