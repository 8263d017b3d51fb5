"""The planner's defaults (ROS parameters / config YAML), declared once: a goal's options
(``MethodOptions``) take their types, bounds and descriptions from here."""
from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


def one_of(known: Callable[[], Collection[str]], what: str) -> AfterValidator:
    """The check of a setting that names a line of a registry (``known()``, read when checked, so
    a line added later counts): ``unknown <what> 'x'; choose one of ...`` otherwise."""
    def check(name: str) -> str:
        choices = known()
        if name not in choices:
            raise ValueError(f"unknown {what} {name!r}; choose one of {', '.join(choices)}")
        return name
    return AfterValidator(check)


class ManagedNodeParams(BaseModel):
    """The parameter every managed (lifecycle) node has: the planner, the bridge, the tracker."""

    model_config = ConfigDict(extra="forbid")

    autostart: bool = Field(True, description="configure and activate at start (a managed node, as nav2's "
                                              "lifecycle manager would); false: wait for ros2 lifecycle set")


class PlannerSettings(BaseModel):
    """Defaults of the translated planner; every field can be overridden per goal where
    ``MethodOptions`` has the same name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    num_samples: int = Field(5, ge=1, le=64, description="k samples per step (Huang: 1 or 10)")
    temperature: float = Field(0.3, ge=0.0, le=2.0, description="sampling temperature (Huang grid 0.1/0.3/0.6)")
    top_p: float = Field(0.9, gt=0.0, le=1.0, description="nucleus sampling")
    frequency_penalty: float = Field(0.3, ge=0.0, le=2.0)
    presence_penalty: float = Field(0.5, ge=0.0, le=2.0)
    repetition_penalty: float = Field(1.0, ge=1.0, le=3.0, description="llama.cpp repeat penalty; 1 = off")
    max_step_tokens: int = Field(24, ge=4, le=256, description="token limit of one generated step")
    max_program_tokens: int = Field(240, ge=16, le=2048, description="token limit of a vanilla program")
    max_steps: int = Field(15, ge=1, le=100, description="step limit (not given by Huang; 20 in Borro)")
    ranking: Literal["huang", "raman"] = Field("huang", description="huang: C + beta*P; raman: ((C+1)/2)*exp(P)")
    beta: float = Field(0.3, ge=0.0, le=10.0, description="weight of the mean log-prob (Huang: 0.3)")
    epsilon: float = Field(0.4, ge=0.0, le=1.0, description="stop when the best score is below this")
    append_before_break: bool = Field(
        False, description="Algorithm 1 appends the step before testing epsilon; the text says the "
                           "plan ends instead of mapping to a faulty action (default)")
    allow_repeated_skills: bool = Field(
        False, description="Huang et al.'s reference code scores a skill already in the plan as -100, "
                           "so a step that only repeats ends the plan; true lifts that rule")
    bank: Literal["scene", "full"] = Field("scene", description="admissible skills of the scene, or of all objects")
    max_skills: int = Field(20_000, ge=100, le=10_000_000,
                            description="the LLM-step methods refuse a robot's world with more skills than this "
                                        "(each is embedded once, and matched at every step)")
    hold_out_query_task: bool = Field(True, description="never use the query's own task as the example")
    fixed_examples: tuple[str, ...] = Field(
        ("Relax on sofa", "Read book", "Browse internet"),
        description="examples for the 'fixed_example' ablation, first available is used")
    seed: int = Field(0, ge=0, le=2**32 - 1,
                      description="base sampling seed (a uint32, as llama.cpp and the goal message keep it)")
    correction_level: Literal["notion", "inference", "cause"] = Field(
        "cause", description="re-prompting error text: 'Task failed' / 'I cannot X' / 'I cannot X because Y'")
    max_corrections_per_step: int = Field(
        3, ge=1, le=50, description="re-prompts or re-samples for one step (Raman et al. give none)")
    max_corrections_per_plan: int = Field(10, ge=1, le=500, description="re-prompts or re-samples for a plan")
    resample_top_k: int = Field(5, ge=1, le=64, description="re-sampling tries the k best admissible skills")
