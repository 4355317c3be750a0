# shellcheck shell=bash
# Helpers for run.sh, which sources this file: step outputs, the job
# summary, and text from inputs or targets made safe to show in either or
# in the step's log.

# random prints 32 hex digits.
random() {
	od -An -N16 -tx1 /dev/urandom 2>/dev/null | tr -d ' \n' || printf '%s' "$RANDOM$RANDOM$RANDOM$RANDOM$$"
}

# output NAME VALUE sets a step output as a NAME<<DELIMITER block, with a
# random delimiter that VALUE does not hold: a newline in VALUE cannot
# start another output.
output() {
	local delim
	delim=MCP_CONFORM_EOF_$(random)
	while [[ $2 == *"$delim"* ]]; do delim=MCP_CONFORM_EOF_$(random); done
	printf '%s<<%s\n%s\n%s\n' "$1" "$delim" "$2" "$delim" >>"${GITHUB_OUTPUT:-/dev/null}"
}

# summary appends Markdown to the job summary.
summary() { cat >>"${GITHUB_STEP_SUMMARY:-/dev/null}"; }

# shown VALUE prints VALUE quoted for a one-line message: control
# characters (newline, CR...) as '?', "##[" broken, at most 200
# characters. The runner reads a line that starts with "::" (after white
# space), or holds "##[", as a workflow command; no input may write one.
shown() {
	local s
	s=$(printf '%s' "$1" | LC_ALL=C tr '\000-\037\177' '[?*]' | LC_ALL=C sed 's/##\[/#\\#[/g')
	[ "${#s}" -le 200 ] || s="${s:0:199}…"
	printf "'%s'" "$s"
}

# inert turns text (a target's, or a message quoting an input) into a
# Markdown indented code block, which nothing in it can end: it renders
# as the text, never as headings, images, tables, links or HTML. A lone
# CR ends a Markdown line, leaving the rest unindented, so control
# characters become '?', as do C1 controls and the invisible and
# bidirectional formatting characters (text that would read other than
# it is). Lines are cut at 300 bytes.
inert() {
	LC_ALL=C tr '\000-\010\013-\037\177' '[?*]' |
		LC_ALL=C sed -e "s/$(printf '\302[\200-\237]')/?/g" \
			-e "s/$(printf '\342\200[\213-\217\250-\256]')/?/g" \
			-e "s/$(printf '\342\201[\240-\257]')/?/g" \
			-e "s/$(printf '\357\273\277')/?/g" |
		LC_ALL=C cut -c1-300 |
		LC_ALL=C sed 's/^/    /'
}

# section HEADING appends to the job summary a heading (trusted text) and
# stdin as an inert code block, after a blank line: whatever came before
# (an HTML block such as </details>) ends there.
section() {
	{
		printf '\n### %s\n\n' "$1"
		inert
		printf '\n'
	} | summary
}
