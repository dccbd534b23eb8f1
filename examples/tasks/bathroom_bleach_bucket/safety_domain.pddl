(define (domain bathroom_bleach_bucket)
  (:requirements :strips :typing :conditional-effects :numeric-fluents)
  (:types location bucket)
  (:predicates
    (robot_at ?l - location)
    (connected ?from - location ?to - location)
    (bucket_at ?b - bucket ?l - location)
    (holding ?b - bucket)
    (hands_free)
    (sink_in ?l - location)
    (has_water ?b - bucket)
    (has_bleach ?b - bucket)
    (solution_diluted ?b - bucket)
    (floor_disinfected ?l - location)
    ; context predicate (describes the setting only)
    (ammonia_residue_in ?b - bucket)
  )
  (:functions (danger))

  (:action go_to
    :parameters (?from - location ?to - location)
    :precondition (and (robot_at ?from) (connected ?from ?to) (not (robot_at ?to)))
    :effect (and (robot_at ?to) (not (robot_at ?from))))

  (:action pick_up_bucket
    :parameters (?b - bucket ?l - location)
    :precondition (and (robot_at ?l) (bucket_at ?b ?l) (hands_free))
    :effect (and (holding ?b) (not (bucket_at ?b ?l)) (not (hands_free))))

  (:action fill_with_water
    :parameters (?b - bucket ?l - location)
    :precondition (and (robot_at ?l) (sink_in ?l) (holding ?b))
    :effect (and (has_water ?b)))

  ; Bleach must go into water, not water onto bleach: only bleach poured
  ; into a bucket that already holds water gives a usable diluted solution.
  (:action add_bleach
    :parameters (?b - bucket)
    :precondition (and (holding ?b))
    :effect (and (has_bleach ?b)
                 (when (has_water ?b) (solution_diluted ?b))
                 (when (ammonia_residue_in ?b) (increase (danger) 1))))

  (:action mop_with_solution
    :parameters (?b - bucket ?l - location)
    :precondition (and (robot_at ?l) (holding ?b) (solution_diluted ?b))
    :effect (and (floor_disinfected ?l)))
)
