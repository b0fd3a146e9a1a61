"""Effects shared by the semantics functions: applying outcomes to an expected state."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sm5.oracle.errors import ExecError
from sm5.oracle.machine.program import register_file
from sm5.oracle.machine.state import (
    Accept,
    Execution,
    ExpectedResource,
    ExpectedState,
    MachineState,
    exact_resource,
)
from sm5.oracle.model.clauses import outcomes_of
from sm5.oracle.model.spec import Clause


@dataclass
class Draft:
    """A mutable working copy of the expected state, frozen again by :meth:`finish`.

    ``words`` holds the words of each resource written so far (copied on its first write,
    frozen into the resource by :meth:`finish`), so a write costs one list store."""

    registers: dict[str, list[Accept]]
    resources: dict[str, ExpectedResource | None]
    invocation: str
    fired: list[Clause] = field(default_factory=list)
    words: dict[str, list[Accept]] = field(default_factory=dict)

    @classmethod
    def of(cls, state: MachineState) -> Draft:
        """The draft of the acceptance sets that hold exactly ``state``."""
        return cls({k: list(v) for k, v in state.registers.items()},
                   {k: exact_resource(r) for k, r in state.resources.items()}, state.invocation)

    def write_word(self, register: str, word: int, value: int) -> None:
        res = self.resources[register]
        if res is None:
            return
        words = self.words.get(register)
        if words is None:
            words = self.words[register] = list(res.words)
        if 0 <= word < len(words):  # a clipped access: words past the end are not written
            words[word] = value

    def set_counter(self, register: str, value: Accept) -> None:
        """The final value of the hidden counter of ``register``'s view."""
        res = self.resources.get(register)
        if res is None:
            return
        if not res.has_counter:
            raise ExecError(f"{register} has no hidden counter")
        self.resources[register] = replace(res, counter=value)

    def set_component(self, register: str, component: int, value: Accept) -> None:
        try:
            self.registers[register][component] = value
        except KeyError:
            raise ExecError(f"the state has no {register}") from None

    def undefine_resource(self, register: str) -> None:
        self.resources[register] = None

    def undefine_files(self, files: frozenset[str]) -> None:
        """Every resource of those register files (all shared memory) becomes undefined."""
        for key in self.resources:
            if register_file(key) in files:
                self.resources[key] = None

    def finish(self) -> Execution:
        regs = {k: (v[0], v[1], v[2], v[3]) for k, v in self.registers.items()}
        resources = self.resources
        for register, words in self.words.items():
            res = resources[register]
            if res is not None:  # an undefined resource has no words
                resources[register] = replace(res, words=tuple(words))
        clauses = tuple(dict.fromkeys(c.id for c in self.fired))
        return Execution(outcomes_of(tuple(self.fired)), clauses,
                         ExpectedState(regs, resources, self.invocation))
