(define (domain basic-domain)
  (:requirements :strips :typing :negative-preconditions :conditional-effects)
  (:types paper drawer)
  (:predicates
    (on_desk ?i - paper)
    (holding ?i - paper)
    (hands_free)
    (drawer_closed ?d - drawer)
    (in_drawer ?i - paper ?d - drawer)
    (archived_to_family_cloud ?i - paper)
    (put_away ?i - paper)
    (private_to_teenager ?i - paper)
  )
  (:action pick_up_paper
    :parameters (?i - paper)
    :precondition (and (on_desk ?i) (hands_free))
    :effect (and (holding ?i) (not (on_desk ?i)) (not (hands_free))))
  (:action scan_and_archive
    :parameters (?i - paper)
    :precondition (and (holding ?i))
    :effect (and (archived_to_family_cloud ?i) (put_away ?i) (hands_free) (not (holding ?i))))
  (:action open_drawer
    :parameters (?d - drawer)
    :precondition (and (drawer_closed ?d))
    :effect (and (not (drawer_closed ?d))))
  (:action place_in_drawer
    :parameters (?i - paper ?d - drawer)
    :precondition (and (holding ?i) (not (drawer_closed ?d)))
    :effect (and (in_drawer ?i ?d) (put_away ?i) (hands_free) (not (holding ?i))))
  (:action close_drawer
    :parameters (?d - drawer)
    :precondition (and (not (drawer_closed ?d)))
    :effect (and (drawer_closed ?d)))
)
